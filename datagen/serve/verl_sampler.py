"""verl's ``data.sampler``: the pool server orders verl's dataset, so each instruction is
drawn once across every verl process and restart.

What verl does with it (verl 0.7.1, the last release with ``data.sampler.class_path``;
0.8 removed it): ``create_rl_sampler`` (``verl/trainer/main_ppo.py``) loads
``data.sampler.class_path`` / ``class_name``, builds ``cls(data_source=dataset,
data_config=config.data)``, asserts it is an ``AbstractSampler`` and that
``data.dataloader_num_workers`` is 0; the trainer (``verl/trainer/ppo/ray_trainer.py``)
puts it in a torchdata ``StatefulDataLoader`` (``batch_size = data.gen_batch_size`` or
``data.train_batch_size``, ``drop_last=True``), saves that loader's ``state_dict()`` with
each checkpoint, and after each step, the checkpoint included, calls
``sampler.update(batch=batch)`` when the sampler is an ``AbstractCurriculumSampler``.

Use::

    data.sampler.class_path=pkg://datagen.serve.verl_sampler
    data.sampler.class_name=DatagenPoolSampler
    +data.sampler.consumer=run-17 +data.sampler.url=http://pool-host:8766
    data.dataloader_num_workers=0

(``consumer``, ``url``, ``lease_s`` may also come from ``$DATAGEN_POOL_CONSUMER``,
``$DATAGEN_POOL_URL``, ``$DATAGEN_POOL_LEASE_S``; the token from ``$DATAGEN_SERVE_TOKEN``.)
"""

from __future__ import annotations

import os
from collections.abc import Sized

from datagen.serve.clients import POOL_URL_ENV, PoolIndexSampler

try:
    from verl.experimental.dataset.sampler import AbstractCurriculumSampler, AbstractSampler
except ImportError:  # no verl here (or verl >= 0.8): the same protocol, so the class imports and is tested
    from abc import abstractmethod

    from torch.utils.data import Sampler

    class AbstractSampler(Sampler[int]):
        """verl 0.7.1 ``verl/experimental/dataset/sampler.py`` ``AbstractSampler``: a torch
        ``Sampler[int]`` built as ``cls(data_source, data_config)``."""

        @abstractmethod
        def __init__(self, data_source: Sized, data_config: object):
            pass

    class AbstractCurriculumSampler(AbstractSampler):
        """verl 0.7.1 ``AbstractCurriculumSampler``: adds ``update(batch)``, called after
        each training step."""

        @abstractmethod
        def update(self, batch: object) -> None:
            pass


CONSUMER_ENV = "DATAGEN_POOL_CONSUMER"
LEASE_ENV = "DATAGEN_POOL_LEASE_S"


def instruction_ids(data_source: object) -> list[str]:
    """The instruction id of each dataset row: verl's ``RLHFDataset`` keeps the parquet
    as ``dataframe`` (a ``datasets.Dataset``), whose ``extra_info.instruction_id`` the
    pool's verl export fills."""
    frame = getattr(data_source, "dataframe", None)
    if frame is None:
        raise TypeError(f"{type(data_source).__name__} has no dataframe (verl's RLHFDataset has one)")
    ids = [(info or {}).get("instruction_id") for info in frame["extra_info"]]
    if not all(ids):
        raise ValueError("rows without extra_info.instruction_id: give verl the pool's verl export")
    return [str(i) for i in ids]


def _setting(config: object, key: str, env: str, default: object = None) -> object:
    sampler = config.get("sampler") if hasattr(config, "get") else None
    value = sampler.get(key) if sampler is not None and hasattr(sampler, "get") else None
    return value if value is not None else os.environ.get(env, default)


class DatagenPoolSampler(PoolIndexSampler, AbstractCurriculumSampler):
    """``PoolIndexSampler`` as verl's curriculum sampler (see the module docstring)."""

    def __init__(self, data_source: Sized, data_config: object):
        get = data_config.get
        batch = get("gen_batch_size") or get("train_batch_size")
        consumer = _setting(data_config, "consumer", CONSUMER_ENV)
        if not consumer:
            raise ValueError(f"name the consumer: +data.sampler.consumer=NAME or ${CONSUMER_ENV}")
        PoolIndexSampler.__init__(
            self, instruction_ids(data_source), str(consumer), batch_size=int(batch),
            lease_s=float(_setting(data_config, "lease_s", LEASE_ENV, 3600.0)),
            url=_setting(data_config, "url", POOL_URL_ENV), drop_last=True)

    def update(self, batch: object = None) -> None:
        PoolIndexSampler.update(self, batch)
