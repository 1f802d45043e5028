"""Where a batch's songs are rendered: here, one after another (`--engine local`), or as tasks on Ray actors
(`--engine ray`). The Ray options are checked before any work (check_engine_options), the cluster is joined and
its resources checked once every row has passed its checks (join_ray), and a job leaves this machine with every
path made absolute (sent): a worker's folder is not this one's."""

from __future__ import annotations

import dataclasses
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

from musicvid.batch.playlist import Job
from musicvid.batch.report import Result
from musicvid.core.errors import UserError, out_of_memory
from musicvid.core.workdir import Workdir
from musicvid.settings.loras import Lora, Loras
from musicvid.settings.model_choice import ModelChoice

RAY_OPTIONS = {"address": "--address", "workers": "--workers", "gpus_per_song": "--gpus-per-song"}


def check_engine_options(args) -> None:
    """Refuse, before any work, a Ray option without `--engine ray` (it would be ignored), fewer than one worker, or
    a number of GPUs per song that is not a finite number of 0 or more."""
    if args.engine != "ray":
        given = next((flag for name, flag in RAY_OPTIONS.items() if getattr(args, name) is not None), None)
        if given:
            raise UserError(f"{given} is a Ray option: give it with --engine ray, or leave it out")
        return
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers {args.workers}: a Ray batch needs at least one worker")
    gpus = args.gpus_per_song
    if gpus is not None and not (math.isfinite(gpus) and gpus >= 0):
        raise UserError(f"--gpus-per-song {gpus:g}: give a number of GPUs of 0 or more (a fraction shares one)")


def render_one(job: Job, registry) -> Result:
    from musicvid.pipeline import make_video

    started = time.perf_counter()
    result = Result(song=job.song, status="done", output=str(job.output))
    try:
        # rows of one song share its work directory (without --workdir): one waits for another's render
        made = make_video(job.request, job.settings, registry, output=job.output, wait=True)
        result.duration, result.workdir = made.duration, os.path.abspath(made.workdir.root)
    except KeyboardInterrupt:
        raise
    except Exception as error:  # any one song's failure is reported; the batch goes on
        said = out_of_memory(error) or error  # (one for want of memory in the sentence the command line says it in)
        result.status, result.error = "failed", str(said) or type(error).__name__
    result.seconds = round(time.perf_counter() - started, 3)  # to the millisecond, as the table says a quick one
    return result


def render_locally(registry, jobs: list[Job], finished) -> None:
    for job in jobs:
        finished(job, render_one(job, registry))


class SongRenderer:
    """A Ray actor: loads the models once, then renders the songs it is handed."""

    def __init__(self, choice: ModelChoice):
        from musicvid.models.registry import registry_of

        self.registry = registry_of(choice, keep_loaded=True)

    def render(self, job: Job) -> Result:
        return render_one(job, self.registry)


@dataclass(frozen=True)
class RayPlan:
    """How many actors a Ray batch starts, and the GPUs each asks for."""

    workers: int
    gpus: float


def join_ray(args, choice: ModelChoice) -> RayPlan:
    """Ray, started here or joined at --address, and the plan its resources allow; refused in one sentence where the
    cluster cannot be reached, or where no node has the GPUs a worker asks for (Ray would wait for them forever)."""
    import ray

    from musicvid.storyboard.kernels import compile_librosa

    compile_librosa()  # once, before the workers start
    if not ray.is_initialized():
        try:
            ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
        except (ConnectionError, ValueError, RuntimeError) as error:
            reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise UserError(f"--address {args.address}: Ray cannot be joined there ({reason})") from None
    nodes = [node["Resources"].get("GPU", 0.0) for node in ray.nodes() if node.get("Alive")]  # each node's GPUs
    cluster_gpus = sum(nodes)
    gpus = args.gpus_per_song if args.gpus_per_song is not None else (1.0 if cluster_gpus else 0.0)
    if gpus > max(nodes, default=0.0):  # a worker runs on one node: Ray would wait forever for a larger one
        raise UserError(
            f"--gpus-per-song {gpus:g}: no node of the Ray cluster has that many GPUs (its nodes have "
            f"{', '.join(f'{n:g}' for n in nodes) or 'none'})"
        )
    check_device_on_ray(choice.device, cluster_gpus, gpus)
    return RayPlan(args.workers or (sum(int(n // gpus) for n in nodes) if gpus else 1), gpus)


def absolute(record):
    """A request's or settings' paths made absolute against this machine's folder."""
    paths = {
        f.name: value.absolute()
        for f in dataclasses.fields(record)
        if isinstance(value := getattr(record, f.name), Path)
    }
    return dataclasses.replace(record, **paths)


def sent(job: Job) -> Job:
    """The job as a Ray worker gets it: every path absolute, as this machine checked it (a worker resolves a relative
    one against its own folder), its work directory and local LoRA files too."""
    request = absolute(job.request)
    workdir = Workdir.of_song(request.song, request.workdir).root.absolute()
    settings = absolute(job.settings)
    loras = (Lora(str(Path(x.source).absolute()), x.weight) if Path(x.source).is_file() else x for x in settings.lora)
    return dataclasses.replace(
        job,
        request=dataclasses.replace(request, workdir=workdir),
        settings=dataclasses.replace(settings, lora=Loras(loras)),
        output=job.output.absolute(),
    )


def render_on_ray(plan: RayPlan, choice: ModelChoice, jobs: list[Job], finished) -> None:
    """Songs as tasks on Ray actors (`plan`). An actor whose process dies is restarted and its song retried once; a
    song that still fails is reported as failed."""
    import ray

    actor = ray.remote(num_cpus=1, num_gpus=plan.gpus, max_restarts=1, max_task_retries=1)(SongRenderer)
    idle = [actor.remote(choice) for _ in range(max(1, min(plan.workers, len(jobs))))]
    waiting, running = list(jobs), {}
    while waiting or running:
        while waiting and idle:
            worker, job = idle.pop(), waiting.pop(0)
            running[worker.render.remote(sent(job))] = (job, worker)
        [ready], _ = ray.wait(list(running), num_returns=1)
        job, worker = running.pop(ready)
        try:
            result = ray.get(ready)
        except ray.exceptions.RayError as error:  # the worker died twice on this song
            reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
            result = Result(job.song, "failed", str(job.output), error=f"worker failed: {reason}")
        idle.append(worker)
        finished(job, result)


def check_device_on_ray(device: str, cluster_gpus: float, gpus: float) -> None:
    """--device on Ray names a device each worker has, not one of this machine's (the head may have no GPU): CUDA
    where the cluster has GPUs and each worker asks for some, a worker's own from cuda:0."""
    import torch

    on = torch.device("cpu" if device == "auto" else device)
    if on.type == "cuda" and not (cluster_gpus and gpus):
        raise UserError(
            f"--device {device} on Ray needs GPUs for its workers: the cluster has {cluster_gpus:g}, and each worker "
            f"asks for {gpus:g} (--gpus-per-song)"
        )
    if on.type == "cuda" and (on.index or 0) >= max(1, math.ceil(gpus)):
        raise UserError(f"--device {device}: a Ray worker sees its own {gpus:g} GPU(s) only, as cuda:0 on")
