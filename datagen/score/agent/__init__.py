"""Agent rollouts for the difficulty step (``difficulty.mode: agent``): mini-swe-agent's loop
with an environment of ours (every command a sandboxed run on the task's working copy) and a
model of ours (datagen's teacher client), each run's diff graded by the grader's code, and the
runs kept as data (SFT rows, ``.traj.json``, ATIF, summarized segments).

- ``env``: ``SandboxEnvironment``, the working copy and its final diff;
- ``model``: ``TeacherModel``;
- ``agent``: ``DefaultAgent`` with self-summarization, the prompt templates (``prompts/``);
- ``runner``: ``AgentScorer`` (K runs per task, masking, re-runs, stored runs);
- ``trajectories``: the exports.
"""

from datagen.score.agent.runner import AgentReport, AgentRun, AgentScorer

__all__ = ["AgentReport", "AgentRun", "AgentScorer"]
