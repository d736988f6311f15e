"""The voices endpoints: OpenAI's ``audio.voice`` list, upload and delete over the voice library."""

from __future__ import annotations

from typing import Any

import numpy as np
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from app.errors import VoxDeskError
from app.server.app import ServerState, _decode, _state, _work
from app.server.guard import BodyTooLarge
from app.server.protocol import ApiError

MAX_UPLOAD_BYTES = 10 * 1024 * 1024


# ---- voices ---------------------------------------------------------------------------------
def _find_voice(state: ServerState, key: str, stock: bool = False):
    """A library voice by name (case-insensitive) or id (app/voices/lookup.py); with ``stock``,
    OpenAI's stock names too, and None for the model's own voice."""
    from app.voices.lookup import VoiceNotFound, find_voice, speaking_voice

    try:
        if stock:
            return speaking_voice(state.library, key, state.config.default_voice)
        voice = find_voice(state.library, key)
        if voice is None:
            raise VoiceNotFound(key, f"There is no voice named {key!r}.")
        return voice
    except VoiceNotFound as exc:
        raise ApiError(
            404,
            f"{exc} List voices with GET /v1/audio/voices or upload one.",
            param="voice",
            code="voice_not_found",
        ) from None


def _voice_json(voice) -> dict[str, Any]:
    """OpenAI's ``audio.voice`` object, plus the transcript and length."""
    from datetime import datetime

    try:
        created = int(datetime.fromisoformat(voice.created).timestamp())
    except ValueError:
        created = 0
    return {
        "object": "audio.voice",
        "id": voice.id,
        "name": voice.name,
        "type": "audio_sample",
        "created_at": created,
        "ref_text": voice.transcript,
        "lora": voice.lora or None,  # the name of the LoRA the voice speaks with
        "duration_s": round(voice.duration, 3),
    }


async def list_voices(request: Request) -> JSONResponse:
    voices = _state(request).library.list()
    data = [_voice_json(v) for v in voices]
    return JSONResponse({"object": "list", "data": data, "voices": [v.name for v in voices]})


async def upload_voice(request: Request) -> JSONResponse:
    state = _state(request)
    try:
        async with request.form(max_files=1, max_fields=8, max_part_size=MAX_UPLOAD_BYTES + 1) as form:
            upload = form.get("audio_sample") or form.get("file")
            name = form.get("name")
            ref_text = form.get("ref_text") or form.get("reference_text") or ""
            if upload is None or isinstance(upload, str):
                raise ApiError(400, "Attach the recording as 'audio_sample' (a file).", param="audio_sample")
            if not isinstance(name, str) or not name.strip():
                raise ApiError(400, "Give the voice a 'name'.", param="name")
            if not isinstance(ref_text, str):
                raise ApiError(400, "'ref_text' must be text.", param="ref_text")
            data = await upload.read(MAX_UPLOAD_BYTES + 1)
    except (ApiError, BodyTooLarge, ClientDisconnect):
        raise
    except Exception as exc:  # noqa: BLE001 - malformed multipart (starlette's MultiPartException, …)
        raise ApiError(400, f"The upload could not be read as multipart form data ({exc}).") from None
    if len(data) > MAX_UPLOAD_BYTES:
        raise ApiError(413, "The recording is larger than 10 MB: send a shorter clip.", code="too_large")
    samples, rate = await _decode(state, data, "audio_sample")
    voice = await _work(_create_voice, state, samples, rate, name, ref_text)
    return JSONResponse(_voice_json(voice), status_code=201)


def _create_voice(state: ServerState, samples: np.ndarray, rate: int, name: str, ref_text: str):
    try:
        return state.library.create_from_samples(samples, rate, name, ref_text)
    except VoxDeskError as exc:
        raise ApiError(400, str(exc), param="audio_sample") from None


async def delete_voice(request: Request) -> JSONResponse:
    state = _state(request)
    voice = _find_voice(state, request.path_params["name"])
    state.library.delete(voice)
    return JSONResponse(
        {"object": "audio.voice.deleted", "id": voice.id, "name": voice.name, "deleted": True}
    )
