"""Experiments: sets of ordinary runs asked for together and read side by side (table-view
and text-to-SQL prompt ablations, the haystack sweep, TARGET's Table 2 reproduced, the demo
suite) and work on a stored run's answers (the truthfulness judge). They stand on the
engine's run mechanics (runner, store, jobs, workers); the engine never imports them."""
