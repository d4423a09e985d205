"""The test harness: one profile per ecosystem (``profiles/``: detect, environment plan, test
command, subset, coverage, replay scripts), every report parser (``parsers``), test runs
(``runners``), grading, the test-file rule every eval path enforces (``protect``), stored tasks
and their replay (``task_store``, ``validate``)."""
