"""A resumable LoRA training run kept in a folder.

Layout::

    <folder>/job.json                       model, data set, config, plan (written once, atomic)
    <folder>/features.pt                    the clips' audio latents (encoded once, atomic)
    <folder>/losses.jsonl                   {"step", "loss"} a line, cut back to the checkpoint on resume
    <folder>/checkpoints/step_NNNNNN/       an official LoRA folder + training_state.pt + state.json
    <folder>/validation/step_NNNNNN.wav     the validation sentence spoken at that step

A checkpoint is written into a hidden temporary folder and renamed into place, so it is whole
or absent; :meth:`TrainJob.run` continues from the newest one after a pause, a quit or a crash
and takes exactly the steps an uninterrupted run would (see :mod:`app.train.trainer`).
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from app import atomic
from app.errors import VoxDeskError
from app.train.clips import DataSet
from app.train.lora import save_lora
from app.train.plan import TrainPlan
from app.train.trainer import Sample, Trainer

log = logging.getLogger(__name__)
FORMAT = 1
STATE = "training_state.pt"


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 1000
    lr: float = 1e-4
    r: int = 32
    alpha: int = 32
    targets: tuple[str, ...] = ("lm", "dit")
    save_every: int = 100
    validate_every: int = 100
    validation_text: str = ""
    seed: int = 0

    def __post_init__(self) -> None:
        if self.steps < 1 or self.save_every < 1 or self.validate_every < 1 or self.r < 1:
            raise VoxDeskError(
                "Training steps, save and validation intervals and the LoRA rank must be 1 or more."
            )
        if not (0 < self.lr < 1):
            raise VoxDeskError("The learning rate must be between 0 and 1 (the recipe uses 0.0001).")


@dataclass(frozen=True)
class ValidationScore:
    step: int
    cer: float  # error rate of the recognizer's transcript (nan: no recognizer installed)
    similarity: float  # cosine similarity to the held-out clips' speaker (nan: no speaker model)
    audio: Path  # the spoken validation sentence


@dataclass(frozen=True)
class TrainProgress:
    phase: str  # "loading", "training", "validating", "saving", "paused", "done", "cancelled", "failed"
    step: int
    total_steps: int
    loss: float | None
    eta_seconds: float | None
    message: str = ""
    validation: ValidationScore | None = None


@dataclass(frozen=True)
class Checkpoint:
    step: int
    loss: float
    validation: ValidationScore | None
    folder: Path  # an official-format LoRA folder


def _step_name(step: int) -> str:
    return f"step_{step:06d}"


def _score_from(data: dict[str, Any] | None) -> ValidationScore | None:
    if not data:
        return None
    return ValidationScore(
        int(data["step"]), float(data["cer"]), float(data["similarity"]), Path(data["audio"])
    )


class TrainJob:
    """A folder: job.json, checkpoints/step_NNNNNN/ (official LoRA format), losses.jsonl."""

    def __init__(self, folder: Path, info: dict[str, Any]) -> None:
        self.folder = Path(folder)
        self.model_dir = Path(info["model_dir"])
        self.dataset_dir = Path(info["dataset"])
        self.config = TrainConfig(**{**info["config"], "targets": tuple(info["config"]["targets"])})
        self.plan = TrainPlan(**info["plan"])
        self._step_times: list[float] = []

    @classmethod
    def create(
        cls, folder: Path, model_dir: Path, dataset: DataSet, config: TrainConfig, plan: TrainPlan
    ) -> TrainJob:
        folder = Path(folder)
        if (folder / "job.json").exists():
            raise VoxDeskError(
                f"{folder} already holds a training run: open it to continue, or choose another folder."
            )
        if not dataset.training_clips():
            raise VoxDeskError("The data set has no usable clips with transcripts: prepare it first.")
        info = {
            "format": FORMAT,
            "model_dir": str(Path(model_dir).resolve()),
            "dataset": str(dataset.folder.resolve()),
            "config": asdict(config),
            "plan": asdict(plan),
        }
        atomic.write_json(folder / "job.json", info)
        return cls(folder, info)

    @classmethod
    def open(cls, folder: Path) -> TrainJob:
        path = Path(folder) / "job.json"
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
            return cls(Path(folder), info)
        except FileNotFoundError:
            raise VoxDeskError(f"{folder} is not a training run (it has no job.json).") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise VoxDeskError(
                f"The training run in {folder} is damaged ({exc.__class__.__name__})."
            ) from None

    # ---- what is on disk ------------------------------------------------------------------
    def losses(self) -> list[tuple[int, float]]:
        path = self.folder / "losses.jsonl"
        if not path.exists():
            return []
        out = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                out.append((int(row["step"]), float(row["loss"])))
            except (ValueError, KeyError, TypeError):
                continue  # a line cut by a crash
        return out

    def checkpoints(self) -> list[Checkpoint]:
        out = []
        for folder in sorted((self.folder / "checkpoints").glob("step_*")):
            try:
                state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            out.append(
                Checkpoint(
                    int(state["step"]), float(state["loss"]), _score_from(state.get("validation")), folder
                )
            )
        return out

    # ---- the run --------------------------------------------------------------------------
    def run(
        self,
        on_progress: Callable[[TrainProgress], None],
        should_stop: Callable[[], str | None],
        *,
        recognizer: Any = None,
        speaker: Any = None,
    ) -> TrainProgress:
        """Train to the end, a pause or a cancel (blocking: call it on a worker thread).
        ``should_stop()`` -> None, "pause" or "cancel", asked before every step; a pause saves a
        checkpoint first. ``recognizer``/``speaker`` score the validation sentence (default: the
        installed ones; without them the scores are nan). Errors end in a "failed" progress."""
        total = self.config.steps
        try:
            return self._run(on_progress, should_stop, recognizer, speaker)
        except VoxDeskError as exc:
            done = self.checkpoints()
            end = TrainProgress("failed", done[-1].step if done else 0, total, None, None, str(exc))
        except torch.cuda.OutOfMemoryError:
            log.exception("training ran out of GPU memory")
            oom = "The GPU ran out of memory. Close other programs that use it and resume."
            end = TrainProgress("failed", 0, total, None, None, oom)
        except Exception as exc:  # noqa: BLE001 - the traceback goes to the log, the user gets a line
            log.exception("training failed")
            end = TrainProgress(
                "failed", 0, total, None, None, f"Training failed ({exc.__class__.__name__}: {exc})."
            )
        on_progress(end)
        return end

    def _run(self, on_progress, should_stop, recognizer, speaker) -> TrainProgress:
        from app.train.validate import Validator

        cfg, total = self.config, self.config.steps
        on_progress(TrainProgress("loading", 0, total, None, None, "Loading the model…"))
        torch.manual_seed(cfg.seed)
        model, tokenizer = self._load_model()
        samples = self._samples(model, tokenizer)
        plan = self.plan
        trainer = Trainer(model, samples, steps=total, lr=cfg.lr, r=cfg.r, alpha=cfg.alpha,
                          targets=cfg.targets, batch_size=plan.batch_size, grad_accum=plan.grad_accum,
                          checkpointing=plan.checkpointing, seed=cfg.seed)  # fmt: skip
        loss: float | None = None
        last = self.checkpoints()
        if last:
            loss = self._resume(trainer, last[-1])
        refs = DataSet.open(self.dataset_dir).held_out_clips()
        validator = Validator(self.folder / "validation", model, tokenizer, cfg.validation_text, refs,
                              recognizer, speaker, cfg.seed)  # fmt: skip
        score = last[-1].validation if last else None
        saved = trainer.step_index
        while trainer.step_index < total:
            stop = should_stop()
            if stop == "pause":
                if trainer.step_index > saved:
                    on_progress(TrainProgress("saving", trainer.step_index, total, loss, None, "Saving…"))
                    self._save(trainer, loss or 0.0, score)
                end = TrainProgress("paused", trainer.step_index, total, loss, None, "Paused.", score)
                on_progress(end)
                return end
            if stop == "cancel":
                end = TrainProgress("cancelled", trainer.step_index, total, loss, None, "Cancelled.", score)
                on_progress(end)
                return end
            started = time.monotonic()
            loss = trainer.step()
            self._step_times = (self._step_times + [time.monotonic() - started])[-20:]
            step = trainer.step_index
            if not math.isfinite(loss):
                raise VoxDeskError(
                    f"The loss became invalid at step {step}: "
                    "resume from the last checkpoint with a lower learning rate."
                )
            with open(self.folder / "losses.jsonl", "a", encoding="utf-8") as f:
                f.write(json.dumps({"step": step, "loss": loss}) + "\n")
            on_progress(TrainProgress("training", step, total, loss, self._eta(total - step), "", score))
            if cfg.validation_text and (step % cfg.validate_every == 0 or step == total):
                on_progress(
                    TrainProgress(
                        "validating", step, total, loss, self._eta(total - step), "Speaking…", score
                    )
                )
                score = validator.score(step)
            if step % cfg.save_every == 0 or step == total:
                on_progress(
                    TrainProgress("saving", step, total, loss, self._eta(total - step), "Saving…", score)
                )
                self._save(trainer, loss, score)
                saved = step
        end = TrainProgress("done", total, total, loss, 0.0, "Done.", score)
        on_progress(end)
        return end

    def _eta(self, steps_left: int) -> float | None:
        times = self._step_times[1:] or self._step_times  # the first step warms up kernels
        return sum(times) / len(times) * steps_left if times else None

    def _load_model(self):
        from app.models.voxcpm.tokenizer import TextTokenizer
        from app.models.voxcpm.weights import load_model

        dtype = "bfloat16" if self.plan.device.startswith("cuda") else "float32"
        return load_model(self.model_dir, self.plan.device, dtype), TextTokenizer(self.model_dir)

    def _samples(self, model, tokenizer) -> list[Sample]:
        """(text ids, latent patches) of every training clip; latents are cached in features.pt."""
        from app.audio.io import read_audio

        clips = DataSet.open(self.dataset_dir).training_clips()
        if not clips:
            raise VoxDeskError("The data set has no usable clips with transcripts left: prepare it again.")
        path = self.folder / "features.pt"
        cache: dict[str, torch.Tensor] = torch.load(path, weights_only=True) if path.exists() else {}
        missing = [c for c in clips if c.id not in cache]
        with torch.no_grad():
            for clip in missing:
                wav, _ = read_audio(clip.path, model.encode_rate, reject_silence=False)
                cache[clip.id] = model.encode_audio(torch.from_numpy(wav)[None], "right")[0].cpu()
        if missing:
            atomic.write_with(path, lambda f: torch.save(cache, f))
        return [(tokenizer(c.text), cache[c.id]) for c in clips]

    def _save(self, trainer: Trainer, loss: float, score: ValidationScore | None) -> Checkpoint:
        cfg, step = self.config, trainer.step_index
        root = self.folder / "checkpoints"
        final = root / _step_name(step)
        if final.exists():
            return self.checkpoints()[-1]
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.tmp-", dir=root))
        try:
            save_lora(trainer.model, tmp, cfg.r, cfg.alpha, cfg.targets, str(self.model_dir))
            atomic.write_with(tmp / STATE, lambda f: torch.save(trainer.state(), f))
            state = {"step": step, "loss": loss, "validation": _score_json(score)}
            atomic.write_json(tmp / "state.json", state)
            os.replace(tmp, final)
            atomic.fsync_dir(root)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        self._trim_losses(step)
        return Checkpoint(step, loss, score, final)

    def _resume(self, trainer: Trainer, checkpoint: Checkpoint) -> float:
        from app.train.lora import load_lora

        load_lora(trainer.model, checkpoint.folder)
        trainer.load(torch.load(checkpoint.folder / STATE, weights_only=False))
        self._trim_losses(checkpoint.step)
        return checkpoint.loss

    def _trim_losses(self, step: int) -> None:
        """Forget losses past ``step`` (steps a crash lost, which the resumed run takes again)."""
        kept = [(s, v) for s, v in self.losses() if s <= step]
        atomic.write_text(
            self.folder / "losses.jsonl", "".join(json.dumps({"step": s, "loss": v}) + "\n" for s, v in kept)
        )

    # ---- the result -----------------------------------------------------------------------
    def make_voice(self, checkpoint: Checkpoint, name: str, library) -> object:
        """A new voice in ``library``: a held-out clip (or the first training clip) as its reference
        audio and transcript, with the checkpoint's LoRA attached (copied into the voice's folder
        and checked against the model it was trained on, app/voices/library.py attach_lora)."""
        ds = DataSet.open(self.dataset_dir)
        clips = ds.held_out_clips() or ds.training_clips()
        if not clips:
            raise VoxDeskError("The data set has no usable clip to give the voice its reference audio.")
        voice = library.import_file(clips[0].path, name=library.unique_name(name), transcript=clips[0].text)
        try:
            return library.attach_lora(voice, checkpoint.folder, self.model_dir)
        except BaseException:
            library.delete(voice)  # no half-made voice: one without its LoRA is not what was trained
            raise


def _score_json(score: ValidationScore | None) -> dict[str, Any] | None:
    if score is None:
        return None
    return {"step": score.step, "cer": score.cer, "similarity": score.similarity, "audio": str(score.audio)}
