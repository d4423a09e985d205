"""``datagen serve grader``: a policy's patch in, a reward out, graded in the sandbox.

Its parts:

- the grading itself is ``datagen.score.grading.TaskGrader`` (one patch on one task, the
  difficulty scorer's grading, each task's environment kept warm), shared with every
  other caller that grades a patch;
- ``core``: ``Grader``, that grader over the tasks of a built output (a tasks build, a
  ``tasks.jsonl`` or a pool), bounding the work (``-w`` sandboxes at once, a queue behind
  them, ``Busy`` when it is full), letting an identical request join a running grade and
  cancelling a grade whose clients have all gone;
- ``adapters``: the trainers' wire formats, one ``Adapter`` per trainer route;
- ``app``: the HTTP routes over them.

The routes:

- ``POST /v1/grade {instance_id, patch, timeout_s?}`` -> ``GradeResult`` (503 with
  ``Retry-After`` when the grader is full; verl's reward function speaks it);
- ``POST /seed_session``, ``POST /aggregate_metrics``: NeMo-Gym's session seed (nothing
  to keep) and its metrics over the ``/verify`` answers (``aggregate``);
- ``POST /verify``: NeMo-Gym's verify body (``responses_create_params``, ``response``)
  answered with the body plus ``reward`` and ``resolved`` (``mask_sample`` on an
  ``infra_error``);
- ``POST /slime/remote_rm``: slime's ``remote_rm`` body (``prompt, response, label``),
  answered with the reward as a bare number;
- ``POST /openrlhf/reward``: OpenRLHF's reward-URL batch (``query, prompts, labels``),
  answered with ``{rewards, scores, extra_logs}``;
- ``GET /health``: the counts (tasks, places, active, waiting, graded, busy, cancelled, joined).

The adapters' requests wait for a place (up to ``--queue-wait-s``) instead of a 503, which
their clients do not retry. ``infra_error`` (the environment or the sandbox failed, not
the patch) has no reward: the native route says so with ``reward: null``, NeMo-Gym's with
``mask_sample``, slime's and OpenRLHF's (whose formats have no way to mask a sample)
answer 502 so the trainer's client retries or fails loudly, never a 0.
"""

from datagen.serve.grader.app import grader_app
from datagen.serve.grader.core import Grader, load_tasks

__all__ = ["Grader", "grader_app", "load_tasks"]
