"""How sports tables are talked about: football league seasons and cup finals, multi-sport
medal tables, marathon results and cycling race stages."""

from __future__ import annotations

from .model import Attr, Topic
from .model import measure as _m

LEAGUE = Topic(
    "football league seasons", "Club", ("club", "clubs"), cross=True,
    measures=(
        _m("Pts", "How many points did {e} earn {ctx}?", "{e} earned {v} points {ctx}",
           "earned more points", "earned fewer points", "earned the most points",
           "earned the fewest points", unit=" points", count="earned more than {t} points",
           para=_m("Pts", "What was the final tally of {e} {ctx}?",
                   "{e} finished with a tally of {v} {ctx}", "finished with a higher tally",
                   "finished with a lower tally", s_cmp="{A} {more} than {B} {ctx}")),
        _m("W", "How many matches did {e} win {ctx}?", "{e} won {v} matches {ctx}",
           "won more matches", "won fewer matches", "won the most matches",
           "won the fewest matches", unit=" wins", count="won more than {t} matches",
           para=_m("W", "How many times was {e} victorious {ctx}?",
                   "{e} was victorious {v} times {ctx}", "was victorious more often",
                   "was victorious less often")),
        _m("L", "How many matches did {e} lose {ctx}?", "{e} lost {v} matches {ctx}",
           "lost more matches", "lost fewer matches", "lost the most matches",
           "lost the fewest matches", unit=" defeats",
           para=_m("L", "How many defeats did {e} suffer {ctx}?",
                   "{e} suffered {v} defeats {ctx}", "suffered more defeats",
                   "suffered fewer defeats")),
        _m("GF", "How many goals did {e} score {ctx}?", "{e} scored {v} goals {ctx}",
           "scored more goals", "scored fewer goals", "scored the most goals",
           "scored the fewest goals", unit=" goals", count="scored more than {t} goals",
           total=("How many goals were scored in total {ctx}?",
                  "A total of {v} goals were scored {ctx}"),
           para=_m("GF", "How often did {e} find the net {ctx}?",
                   "{e} found the net {v} times {ctx}", "found the net more often",
                   "found the net less often")),
        _m("GA", "How many goals did {e} concede {ctx}?", "{e} conceded {v} goals {ctx}",
           "conceded more goals", "conceded fewer goals", "conceded the most goals",
           "conceded the fewest goals", unit=" goals"),
    ),
    attrs=(Attr(("Pos",), "In which position did {e} finish {ctx}?",
                "{e} finished in position {0} {ctx}"),),
)

CUP = Topic(
    "football cup finals", "Year", ("final", "finals"), name_tpl="the {e} final",
    measures=(
        _m("Attendance", "How many spectators attended the {e} {cup} final?",
           "The {e} {cup} final was attended by {v} spectators", "drew a larger crowd",
           "drew a smaller crowd", "drew the largest crowd", "drew the smallest crowd",
           style="big", unit=" spectators", count="drew more than {t} spectators",
           q_max="Which {cup} final {most}?", q_cmp="Which {cup} final {more}, {A} or {B}?",
           s_cmp="{A} of the {cup} {more} than {B}"),
    ),
    attrs=(
        Attr(("Winner", "Runner-up", "Score"), "Who won the {e} {cup} final?",
             "{0} won the {e} {cup} final, beating {1} {2}", swap=True,
             count=("How many times did {x} win the {cup}?", "{x} won the {cup} {n} times"),
             para=Attr(("Winner", "Runner-up"),
                       "Which side did {1} defeat to lift the trophy in {e}?",
                       "{0} defeated {1} to lift the trophy in {e}", swap=True,
                       count=("How many times did {x} lift the trophy?",
                              "{x} lifted the trophy {n} times"))),
        Attr(("Venue",), "Where was the {e} {cup} final played?",
             "The {e} {cup} final was played at {0}",
             count=("How many {cup} finals were played at {x}?",
                    "{N} {cup} finals were played at {x}")),
    ),
)


MEDALS = Topic(
    "multi-sport medal tables", "Nation", ("nation", "nations"), cross=True,
    measures=tuple(
        _m(col, f"How many {word} medals did {{e}} win {{ctx}}?",
           f"{{e}} won {{v}} {word} medals {{ctx}}", f"won more {word} medals",
           f"won fewer {word} medals", f"won the most {word} medals",
           f"won the fewest {word} medals", unit=f" {word} medals",
           count=f"won more than {{t}} {word} medals",
           total=(f"How many {word} medals were awarded {{ctx}}?",
                  f"A total of {{v}} {word} medals were awarded {{ctx}}"),
           para=_m(col, f"How many {place} finishes did {{e}} collect {{ctx}}?",
                   f"{{e}} collected {{v}} {place} finishes {{ctx}}",
                   f"collected more {place} finishes", f"collected fewer {place} finishes",
                   f"collected the most {place} finishes",
                   f"collected the fewest {place} finishes",
                   count=f"collected more than {{t}} {place} finishes"))
        for col, word, place in (("Gold", "gold", "first-place"),
                                 ("Silver", "silver", "second-place"),
                                 ("Bronze", "bronze", "third-place"))
    ) + (
        _m("Total", "How many medals did {e} win in total {ctx}?",
           "{e} won {v} medals in total {ctx}", "won more medals in total",
           "won fewer medals in total", "won the most medals overall",
           "won the fewest medals overall", unit=" medals",
           count="won more than {t} medals in total",
           total=("How many medals were awarded in total {ctx}?",
                  "A total of {v} medals were awarded {ctx}"),
           para=_m("Total", "How many podium finishes did {e} collect {ctx}?",
                   "{e} collected {v} podium finishes {ctx}", "collected more podium finishes",
                   "collected fewer podium finishes", "collected the most podium finishes",
                   "collected the fewest podium finishes",
                   count="collected more than {t} podium finishes")),
    ),
)


MARATHON = Topic(
    "marathon results", "Athlete", ("runner", "runners"), cross=True,
    measures=(
        _m("Time", "What was the finishing time of {e} {ctx}?", "{e} finished {ctx} in {v}",
           "finished in a slower time", "finished in a faster time",
           "finished with the slowest time", "finished with the fastest time", style="time",
           count="finished in under {t}", count_op="lt", with_="in {v}",
           para=_m("Time", "How long did it take {e} to complete the course {ctx}?",
                   "{e} needed {v} to complete the course {ctx}",
                   "needed more time to complete the course",
                   "needed less time to complete the course", style="time",
                   q_cmp="Which competitor {more} {ctx}, {A} or {B}?")),
    ),
    attrs=(
        Attr(("Athlete", "Time"), "Who won {race}?", "{0} won {race} in {1}", key="Position",
             only=("1",)),
        Attr(("Position",), "In which position did {e} finish {ctx}?",
             "{e} finished in position {0} {ctx}"),
        Attr(("Country",), "Which country did {e} represent {ctx}?", "{e} represented {0} {ctx}",
             count=("How many of the listed runners {ctx} came from {x}?",
                    "{N} of the listed runners {ctx} came from {x}"),
             para=Attr(("Country",), "Which nation did {e} run for {ctx}?",
                       "{e} ran for {0} {ctx}")),
    ),
)

CYCLING = Topic(
    "cycling race stages", "Stage", ("stage", "stages"), name_tpl="stage {e}",
    para_name_tpl="the {o} leg",
    measures=(
        _m("Distance (km)", "How long was stage {e} {ctx}?", "Stage {e} {ctx} was {v} km long",
           "was longer", "was shorter", "was the longest", "was the shortest", style="f1",
           unit=" km", count="were longer than {t} km",
           total=("What was the total distance of the stages {ctx}?",
                  "The stages {ctx} covered a total of {v} km"),
           s_cmp="{A} {ctx} {more} than {B}",
           para=_m("Distance (km)", "How many kilometres did riders cover on {e} {ctx}?",
                   "Riders covered {v} kilometres on {e} {ctx}", "was longer", "was shorter",
                   "was the longest", "was the shortest", style="f1",
                   count="were longer than {t} kilometres", s_cmp="{A} {ctx} {more} than {B}")),
    ),
    attrs=(
        Attr(("Winner",), "Who won stage {e} {ctx}?", "{0} won stage {e} {ctx}",
             count=("How many stages {ctx} did {x} win?", "{x} won {n} stages {ctx}"),
             para=Attr(("Winner",), "Which rider was victorious on {e} {ctx}?",
                       "{0} was victorious on {e} {ctx}")),
        Attr(("Course",), "What was the course of stage {e} {ctx}?",
             "Stage {e} {ctx} followed the course {0}"),
        Attr(("Type",), "What type of stage was stage {e} {ctx}?", "Stage {e} {ctx} was a {0}",
             count=("How many stages {ctx} were of the type {x}?",
                    "{N} stages {ctx} were of the type {x}")),
        Attr(("Date",), "On what date was stage {e} {ctx} held?",
             "Stage {e} {ctx} was held on {0}"),
    ),
)
