"""The speech endpoint (``POST /v1/audio/speech``): a request checked, spoken by the shared
engine and answered as a whole file, an audio stream or SSE events; a client that goes away
cancels its request."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any

import numpy as np
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from app.engine.events import AudioChunk, RequestFailed, RequestFinished, RequestRetried
from app.engine.request import EmotionControl, SynthRequest
from app.errors import VoxDeskError
from app.server import formats
from app.server.app import (
    ServedModel,
    ServerState,
    _decode,
    _json_body,
    _parse_json,
    _require_engine,
    _state,
    _work,
)
from app.server.guard import StreamFailed, stopping_error
from app.server.protocol import OPENAI_MODEL_ALIASES, ApiError, SpeechParams, parse_speech
from app.server.voices import _find_voice

log = logging.getLogger(__name__)

_GENERATION_FAILURES = ("failed on this device", "invalid audio", "shutting down")


# ---- speech ---------------------------------------------------------------------------------
def _voice_prompt(state: ServerState, model: ServedModel, p: SpeechParams, ref, loop):
    """The request's VoicePrompt, a callback that stores newly encoded library latents
    (``ref``: the decoded ``ref_audio``, samples and rate, if sent) and the folder of the LoRA
    attached to the library voice (None when it has none)."""
    from app.audio.io import resample
    from app.models.voxcpm.prompt import VoicePrompt
    from app.voices import latents
    from app.voices.cloning import VOXCPM, to_voice_prompt

    if ref is not None:
        samples, rate = ref
        if model.architecture in VOXCPM:  # VoxCPM encodes at its VAE's rate; others resample themselves
            audio, own = resample(samples, rate, model.encoder_rate), None
        else:
            audio, own = samples, rate
        if p.ref_text.strip():
            return VoicePrompt(prompt_audio=audio, prompt_text=p.ref_text, sample_rate=own), None, None
        if not model.has("reference"):
            raise ApiError(
                400, "This model needs 'ref_text' (the words spoken in ref_audio).", param="ref_text"
            )
        return VoicePrompt(reference_audio=audio, sample_rate=own), None, None
    voice = _find_voice(state, p.voice, stock=True)
    if voice is None:  # "default", or a stock name with no default voice set
        return None, None, None
    lora = state.library.lora_folder(voice)
    if p.ref_text.strip():
        voice = voice.__class__(**{**voice.to_dict(), "transcript": p.ref_text})
    try:
        prompt = to_voice_prompt(state.library, voice, model.encoder_rate, "auto", model.architecture,
                                 model.model_id, model.controls or None)  # fmt: skip
    except VoxDeskError as exc:
        raise ApiError(400, str(exc), param="voice") from None

    def store(role: str, array) -> None:
        _to_loop(loop, latents.store, state.library, voice, model.model_id, role, array)

    return prompt, store, None if lora is None else str(lora)


def _to_loop(loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any) -> None:
    """Hand ``fn(*args)`` from the engine thread to the server's loop. Once the server has
    stopped its loop is closed: the requests it cancelled still report their end, to nobody
    (a traceback each, ~60 KB for 40 requests, filled a stderr pipe and hung the stop)."""
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # the loop is closed
        pass


def _check_model(model: ServedModel, p: SpeechParams) -> None:
    """A 400 naming the first field the loaded family cannot honour."""
    if p.model is not None and p.model not in (model.name, *OPENAI_MODEL_ALIASES):
        raise ApiError(404, f"The model {p.model!r} is not served here; this server has {model.name!r}.",
                       param="model", code="model_not_found")  # fmt: skip
    takes_them = model.has("instruction") or model.has("voice_design")
    if p.instructions and p.instructions.strip() and not takes_them:
        raise ApiError(400, f"'instructions' needs a model that takes them (VoxCPM2's voice design, "
                       f"CosyVoice's instruct mode); {model.title} does not.",
                       param="instructions")  # fmt: skip
    # VoxCPM's own settings: a family without them refuses a value other than the default
    own = (("cfg_value", p.cfg_value, 2.0, "cfg"),
           ("inference_timesteps", p.inference_timesteps, 10, "timesteps"))  # fmt: skip
    for name, value, default, control in own:
        if value != default and not model.has(control):
            raise ApiError(400, f"'{name}' is not a setting of {model.title}: leave it out.", param=name)
    _check_emotion(model, p)


def _check_emotion(model: ServedModel, p: SpeechParams) -> None:
    """IndexTTS-2.5's emotion and language fields against what the loaded family honours."""
    source = p.emotion_source
    if source is not None and not model.has("emotion"):
        raise ApiError(400, f"'{source}' needs a model that speaks emotions (IndexTTS-2.5); {model.title} "
                       "does not: leave it out.", param=source)  # fmt: skip
    if source == "emotion_text" and not model.has("emotion_text"):
        raise ApiError(400, f"'emotion_text' needs the QwenEmotion model, which this server's {model.title} "
                       "folder lacks: download it into the model folder, or send 'emotion_vector' or "
                       "'emotion_audio'.", param=source)  # fmt: skip
    if not p.language:
        return
    if not model.has("language"):
        raise ApiError(400, f"'language' is not a setting of {model.title} (it reads the language from the "
                       "text): leave it out.", param="language")  # fmt: skip
    if p.language not in model.languages:
        raise ApiError(400, f"'language' {p.language!r} is not one {model.title} speaks: send one of "
                       f"{', '.join(model.languages)}, or leave it out to guess from the text.",
                       param="language")  # fmt: skip


async def _spoken_text(state: ServerState, model: ServedModel, p: SpeechParams) -> str:
    """The text the engine speaks. With ``normalize``, numbers and symbols are spelled out in the
    normalizer's child process (as the window does), under a time limit: never on the engine
    thread, where a long text held every other client's request for seconds."""
    from app.models.voxcpm.prompt import design_text, normalize_text

    text = normalize_text(p.input)
    if p.instructions and p.instructions.strip() and model.has("voice_design"):
        text = design_text(p.instructions.strip(), text)
    if not p.normalize:
        return text
    from app.text import normalize

    limit = state.config.normalize_timeout_s
    try:
        return await asyncio.wait_for(asyncio.wrap_future(normalize.background.submit(text)), limit)
    except asyncio.TimeoutError:  # noqa: UP041 - (Python 3.10's own class)
        raise ApiError(503, f"Reading numbers as words took longer than {limit:g} s: send the text in "
                       "shorter pieces, or without 'normalize'.", param="normalize",
                       code="normalize_timeout") from None  # fmt: skip
    except VoxDeskError as exc:
        raise ApiError(400, str(exc), param="normalize") from None
    except Exception:  # noqa: BLE001 - the child died (BrokenProcessPool): a plain 500
        log.exception("normalizing a request's text failed")
        raise ApiError(500, "Reading numbers as words failed on this server: send the text without "
                       "'normalize'.", param="normalize", code="normalize_failed") from None  # fmt: skip


def _emotion(state: ServerState, p: SpeechParams, clip) -> EmotionControl | None:
    """The request's emotion, checked (a 400 naming its field): ``clip`` (the decoded
    ``emotion_audio``: samples and rate), a library voice's recording (``emotion_voice``), the
    weights or the description."""
    weight = {"weight": p.emotion_weight} if p.emotion_weight is not None else {}
    if clip is not None:
        field, control = "emotion_audio", EmotionControl(clip=clip[0], clip_rate=clip[1], **weight)
    elif p.emotion_voice is not None:
        try:
            voice = _find_voice(state, p.emotion_voice)
        except ApiError as exc:  # (a 404 like 'voice''s, naming this field)
            exc.param = "emotion_voice"
            raise
        try:
            audio = state.library.audio(voice)
        except VoxDeskError as exc:
            raise ApiError(400, str(exc), param="emotion_voice") from None
        field, control = "emotion_voice", EmotionControl(clip=audio, clip_rate=voice.sample_rate, **weight)
    elif p.emotion_vector is not None:
        field, control = "emotion_vector", EmotionControl(vector=p.emotion_vector, **weight)
    elif p.emotion_text is not None:
        field, control = "emotion_text", EmotionControl(text=p.emotion_text.strip(), **weight)
    else:
        return None
    try:
        control.check()
    except VoxDeskError as exc:
        raise ApiError(400, str(exc), param=field) from None
    return control


def _synth_request(state: ServerState, model: ServedModel, p: SpeechParams, text: str, ref, emo, loop):
    """The engine request (the voice read and resampled here: on a worker, see :func:`_work`);
    ``ref``/``emo``: the decoded ``ref_audio``/``emotion_audio`` (samples and rate), if sent."""
    prompt, store, lora = _voice_prompt(state, model, p, ref, loop)
    seed = p.seed if p.seed is not None else secrets.randbelow(2**31)
    # OpenAI's 'instructions': CosyVoice's instruct mode (VoxCPM2 puts them before the text instead)
    instruction = (p.instructions or "").strip() if model.has("instruction") else ""
    # A streamed body cannot take back a runaway take, so streams keep their first take, as the
    # official package does (it turns retry_badcase off when streaming); whole files retry.
    request = SynthRequest(text, prompt, seed, p.cfg_value, p.inference_timesteps,
                           min(p.min_new_tokens, p.max_new_tokens), p.max_new_tokens,
                           retry_badcase=p.stream is None, speed=p.speed, lora=lora,
                           instruction=instruction, emotion=_emotion(state, p, emo),
                           language=p.language)  # fmt: skip
    try:
        request.check()
    except VoxDeskError as exc:
        raise ApiError(400, str(exc)) from None
    return request, store


def _parse_request(raw: bytes) -> SpeechParams:
    return parse_speech(_parse_json(raw))


def _failure(event: RequestFailed) -> ApiError:
    status = 500 if any(s in event.message for s in _GENERATION_FAILURES) else 400
    return ApiError(status, event.message, code="generation_failed")


async def _until_disconnect(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def _stop_signal(state: ServerState) -> asyncio.Future:
    """A future done once the server starts to stop (never, for an app run outside uvicorn)."""
    if state.stopping is None:
        return asyncio.get_running_loop().create_future()
    return asyncio.ensure_future(state.stopping.wait())


async def speech(request: Request) -> Response:
    state = _state(request)
    raw = await _json_body(request)
    params = await _work(_parse_request, raw)
    del raw  # (a request stays open as long as its audio: keep only what it still needs)
    host, model = _require_engine(state)
    _check_model(model, params)
    ref = emo = None
    if params.ref_audio is not None:
        ref = await _decode(state, params.ref_audio, "ref_audio")
        params = dataclasses.replace(params, ref_audio=None)
    if params.emotion_audio is not None:
        emo = await _decode(state, params.emotion_audio, "emotion_audio")
        params = dataclasses.replace(params, emotion_audio=None)
    text = await _spoken_text(state, model, params)
    loop = asyncio.get_running_loop()
    synth, store = await _work(_synth_request, state, model, params, text, ref, emo, loop)
    del ref, emo
    host, model = _require_engine(state)  # (the window may have unloaded it meanwhile)
    if state.in_flight >= state.config.max_pending:
        raise ApiError(429, "The server is busy: too many requests are queued. Try again shortly.",
                       code="queue_full", retry_after=1)  # fmt: skip
    events: asyncio.Queue = asyncio.Queue()
    state.in_flight += 1
    state.requests_total += 1
    handle = host.submit(synth, lambda ev: _to_loop(loop, events.put_nowait, ev), store)
    done = False

    def release() -> None:
        nonlocal done
        if not done:
            done = True
            state.in_flight -= 1

    watcher = asyncio.ensure_future(_until_disconnect(request))
    stop = _stop_signal(state)
    try:
        first = await _next_event(events, watcher, stop)
        if first is watcher:  # the client went away while queued
            host.cancel(handle)
            release()
            return Response(status_code=499)
        if first is stop:
            raise stopping_error()
        if isinstance(first, RequestFailed):
            release()
            raise _failure(first)
        headers = {"X-Seed": str(synth.seed), "X-Sample-Rate": str(model.sample_rate)}
        if params.stream is None:
            chunks = [first]
            while not isinstance(chunks[-1], (RequestFinished, RequestFailed)):
                ev = await _next_event(events, watcher, stop)
                if ev is watcher:
                    host.cancel(handle)
                    release()
                    return Response(status_code=499)
                if ev is stop:
                    raise stopping_error()
                chunks.append(ev)
            release()
            stop.cancel()
            if isinstance(chunks[-1], RequestFailed):
                raise _failure(chunks[-1])
            retried = [i for i, c in enumerate(chunks) if isinstance(c, RequestRetried)]
            kept = chunks[retried[-1] + 1 :] if retried else chunks  # the last take only
            audio = [c.samples for c in kept if isinstance(c, AudioChunk)]
            samples = np.concatenate(audio) if audio else np.zeros(0, np.float32)
            fmt = params.response_format
            body = await _work(formats.encode_whole, samples, model.sample_rate, fmt)
            return Response(body, media_type=formats.MEDIA_TYPES[params.response_format], headers=headers)
    except BaseException:
        watcher.cancel()
        stop.cancel()
        if not done:
            host.cancel(handle)
            release()
        raise
    watcher.cancel()
    stream = _stream_bytes(first, events, stop, params.response_format, model.sample_rate, host, handle,
                           release)  # fmt: skip
    if params.stream == "sse":
        return StreamingResponse(_sse(stream, synth), media_type="text/event-stream", headers=headers)
    media = formats.MEDIA_TYPES[params.response_format]
    return StreamingResponse(stream, media_type=media, headers=headers)


async def _next_event(events: asyncio.Queue, *ends: asyncio.Future):
    """The request's next audio, finish, failure or retry event; or whichever of ``ends`` (the
    client leaving, the server stopping) happened first."""
    while True:
        getter = asyncio.ensure_future(events.get())
        done, _ = await asyncio.wait({getter, *ends}, return_when=asyncio.FIRST_COMPLETED)
        if getter not in done:
            getter.cancel()
            return next(end for end in ends if end in done)
        event = getter.result()
        if isinstance(event, (AudioChunk, RequestFinished, RequestFailed, RequestRetried)):
            return event


async def _stream_bytes(first, events, stop, fmt, rate, host, handle, release) -> AsyncIterator[bytes]:
    """The audio body as the engine makes it; a client that leaves cancels the request. If the
    engine drops the request or the server stops, :class:`StreamFailed` cuts the body short."""
    finished = False
    try:
        if fmt == "wav":
            yield formats.wav_header(rate)
        event = first
        while True:
            if isinstance(event, AudioChunk):
                yield formats.pcm16(event.samples)
            elif isinstance(event, RequestFinished):
                finished = True
                return
            elif isinstance(event, RequestFailed):
                finished = True
                raise StreamFailed(event.message)
            event = await _next_event(events, stop)
            if event is stop:
                raise StreamFailed("The server stopped before this speech was finished: send the "
                                   "request again once it is back.")  # fmt: skip
    finally:
        stop.cancel()
        if not finished:
            host.cancel(handle)
        release()


async def _sse(stream: AsyncIterator[bytes], synth: SynthRequest) -> AsyncIterator[bytes]:
    """OpenAI's speech SSE events around the same bytes the audio stream carries; a stream that
    cannot be finished ends with an ``error`` event instead of ``speech.audio.done``."""
    n_bytes = 0
    try:
        async for data in stream:
            n_bytes += len(data)
            delta = {"type": "speech.audio.delta", "audio": base64.b64encode(data).decode("ascii")}
            yield f"data: {json.dumps(delta)}\n\n".encode()
    except StreamFailed as exc:
        error = {"type": "error", "error": {"message": str(exc), "type": "server_error"}}
        yield f"data: {json.dumps(error)}\n\n".encode()
        return
    n_in = len(synth.text)
    usage = {"input_tokens": n_in, "output_tokens": n_bytes // 2, "total_tokens": n_in + n_bytes // 2}
    yield f"data: {json.dumps({'type': 'speech.audio.done', 'usage': usage})}\n\n".encode()
