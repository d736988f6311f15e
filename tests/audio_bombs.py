"""Decode bombs made at run time, small on disk: audio files whose header promises far more
samples, channels or rate than a voice recording has.

:func:`flac_constant` writes a real FLAC stream by hand in which every subframe is CONSTANT (one
value per channel per block), so an hour of 8 channels at 384 kHz is a few hundred KB and takes
milliseconds to write, while decoding it produces every sample. :func:`claim_frames` rewrites
the length a FLAC header states (a file that lies about its length).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

BLOCK = 4096  # frames per FLAC frame (the FLAC subset's usual block size)


def _crc_table(poly: int, width: int) -> list[int]:
    top, mask = 1 << (width - 1), (1 << width) - 1
    table = []
    for byte in range(256):
        crc = byte << (width - 8)
        for _ in range(8):
            crc = ((crc << 1) ^ poly) if crc & top else crc << 1
        table.append(crc & mask)
    return table


_CRC8, _CRC16 = _crc_table(0x07, 8), _crc_table(0x8005, 16)


def _crc8(data: bytes) -> int:
    crc = 0
    for b in data:
        crc = _CRC8[crc ^ b]
    return crc


def _crc16(data: bytes) -> int:
    crc = 0
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC16[(crc >> 8) ^ b]
    return crc


def _utf8_number(n: int) -> bytes:
    """FLAC's frame number: UTF-8's encoding extended to 31 bits."""
    if n < 0x80:
        return bytes([n])
    for length in range(2, 7):
        if n < 1 << (5 * length + 1):
            out = [0x80 | ((n >> (6 * i)) & 0x3F) for i in range(length - 1)][::-1]
            lead = (0xFF << (8 - length)) & 0xFF | (n >> (6 * (length - 1)))
            return bytes([lead, *out])
    raise ValueError(n)


def flac_constant(path: Path, rate: int, channels: int, seconds: float, value: int = 3000) -> Path:
    """A valid 16-bit FLAC of ``seconds`` at ``rate`` with ``channels`` channels, each sample
    ``value`` (a DC level, loud enough not to count as silence)."""
    frames = int(round(seconds * rate))
    info = bytearray()
    info += BLOCK.to_bytes(2, "big") * 2  # min and max block size
    info += bytes(6)  # min and max frame size: unknown
    packed = (rate << 44) | ((channels - 1) << 41) | (15 << 36) | frames
    info += packed.to_bytes(8, "big") + bytes(16)  # rate, channels, 16 bits, total frames; no MD5
    out = bytearray(b"fLaC" + bytes([0x80, 0, 0, 34]) + info)  # the last (and only) metadata block
    sub = bytes([0]) + (value & 0xFFFF).to_bytes(2, "big")  # CONSTANT subframe, 16 bits
    for number in range((frames + BLOCK - 1) // BLOCK):
        size = min(BLOCK, frames - number * BLOCK)
        # sync, fixed blocksize; block size from the end of the header (16 bits), rate from
        # STREAMINFO; independent channels, bits per sample from STREAMINFO
        head = bytes([0xFF, 0xF8, 0x70, (channels - 1) << 4]) + _utf8_number(number)
        head += (size - 1).to_bytes(2, "big")
        head += bytes([_crc8(head)])
        frame = head + sub * channels
        out += frame + _crc16(frame).to_bytes(2, "big")
    path.write_bytes(bytes(out))
    return path


def claim_frames(path: Path, frames: int) -> Path:
    """Rewrite the total length (36 bits) in a FLAC file's STREAMINFO header."""
    data = bytearray(path.read_bytes())
    assert data[:4] == b"fLaC", "not a FLAC file"
    packed = int.from_bytes(data[18:26], "big")
    data[18:26] = ((packed & ~((1 << 36) - 1)) | frames).to_bytes(8, "big")
    path.write_bytes(bytes(data))
    return path


def small_flac(path: Path, rate: int = 16000, seconds: float = 0.05) -> Path:
    """A short real FLAC tone (a few hundred bytes), to rewrite the header of."""
    t = np.arange(int(rate * seconds)) / rate
    sf.write(str(path), (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), rate, format="FLAC")
    return path


def vorbis_wide(path: Path, channels: int = 255, rate: int = 192000, seconds: float = 0.02) -> Path:
    """An Ogg Vorbis file with ``channels`` channels at ``rate`` (a short real one: the header is
    what VoxDesk must judge it by)."""
    t = np.arange(int(rate * seconds)) / rate
    tone = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    sf.write(str(path), np.repeat(tone[:, None], channels, axis=1), rate, format="OGG", subtype="VORBIS")
    return path
