"""A verl-style training loop, run as its own process by the tests (so it can be SIGKILLed).

It builds the sampler through verl's own ``create_rl_sampler`` when verl imports (else the
same steps as verl 0.7.1's: load ``data.sampler.class_path``, build it, check it), puts it
in torchdata's ``StatefulDataLoader`` as verl's trainer does, and keeps verl's step order
(``verl/trainer/ppo/ray_trainer.py`` 0.7.1): fetch a batch, train, save the checkpoint
(the model and the loader's ``state_dict()``), then ``sampler.update(batch=batch)``.

The "model" is the list of instruction ids trained on, saved with the checkpoint: what a
resumed run has learned from is exactly what that list holds. ``--pause STEP:WHERE``
(``trained``: before the checkpoint; ``saved``: after it, before ``update``) prints a line
and waits there to be killed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import datasets
import torch
from omegaconf import OmegaConf
from torchdata.stateful_dataloader import StatefulDataLoader

import datagen.serve.verl_sampler as verl_sampler
from datagen.serve.clients import PoolClient


class PoolRows(torch.utils.data.Dataset):
    """The pool's verl export as verl's ``RLHFDataset`` keeps it (``dataframe``, a
    ``datasets.Dataset`` of the parquet); an item is the row's instruction id."""

    def __init__(self, parquet: Path):
        self.dataframe = datasets.Dataset.from_parquet(str(parquet))

    def __len__(self) -> int:
        return len(self.dataframe)

    def __getitem__(self, n: int) -> str:
        return self.dataframe[n]["extra_info"]["instruction_id"]


def make_sampler(config, dataset):
    """verl's ``create_rl_sampler``, or (no verl here) the steps it takes in verl 0.7.1;
    and which of the two built it."""
    try:
        from verl.trainer.main_ppo import create_rl_sampler
    except ImportError:
        import importlib

        module = importlib.import_module(config.sampler.class_path.removeprefix("pkg://").replace("/", "."))
        sampler = getattr(module, config.sampler.class_name)(data_source=dataset, data_config=config)
        assert isinstance(sampler, verl_sampler.AbstractSampler)
        assert config.get("dataloader_num_workers", 8) == 0
        return sampler, "replay"
    return create_rl_sampler(config, dataset), "verl"


def save(path: Path, state: dict) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--ckpt", type=Path, required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--lease-s", type=float, default=4.0)
    ap.add_argument("--pause", default="")
    ap.add_argument("--deadline-s", type=float, default=240.0)
    args = ap.parse_args()
    config = OmegaConf.create({
        "train_batch_size": args.batch, "dataloader_num_workers": 0, "shuffle": False,
        "sampler": {"class_path": "pkg://datagen.serve.verl_sampler", "class_name": "DatagenPoolSampler",
                    "consumer": "verl-test", "url": args.url, "lease_s": args.lease_s}})
    dataset = PoolRows(args.data)
    sampler, factory = make_sampler(config, dataset)
    assert isinstance(sampler, verl_sampler.AbstractCurriculumSampler)
    loader = StatefulDataLoader(dataset=dataset, batch_size=config.get("gen_batch_size", config.train_batch_size),
                                num_workers=0, drop_last=True, collate_fn=list, sampler=sampler)
    trained, step = [], 0
    if args.ckpt.exists():
        state = torch.load(args.ckpt, weights_only=False)
        trained, step = state["trained"], state["step"]
        loader.load_state_dict(state["dataloader"])
    pause_step, _, pause_where = args.pause.partition(":")
    client, deadline = PoolClient(args.url), time.monotonic() + args.deadline_s
    while time.monotonic() < deadline:
        for batch in loader:
            step += 1
            trained.extend(batch)  # the training step
            if str(step) == pause_step and pause_where == "trained":
                print(f"paused {step} trained", flush=True)
                time.sleep(3600)
            save(args.ckpt, {"trained": trained, "step": step, "dataloader": loader.state_dict()})
            if str(step) == pause_step and pause_where == "saved":
                print(f"paused {step} saved", flush=True)
                time.sleep(3600)
            if isinstance(loader.sampler, verl_sampler.AbstractCurriculumSampler):
                loader.sampler.update(batch=batch)
        status = client.status()
        if status["free"] == 0 and status["leased"] == 0:
            break
        time.sleep(0.3)  # a dead run's lease is still out: it ends by itself, then it is ours
    else:
        sys.exit("deadline passed")
    print(json.dumps({"trained": trained, "steps": step, "conflicts": sampler.conflicts, "factory": factory}),
          flush=True)


if __name__ == "__main__":
    main()
