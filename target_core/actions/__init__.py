"""The command side of the dashboard: what a page's button launches or changes (runs,
jobs, experiments, benchmark drafts, datasets), one module per family of actions. Each
action is a thin function over engine/, experiments/, benchgen/ or datasets/ returning
what the page shows (a Job, a message); the read models beside it launch and run
nothing (tests/test_architecture.py)."""
