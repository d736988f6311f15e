"""A script's settings with a CosyVoice model (issue 18 §5): the instruction (the script's, or a
line's own from *Segment settings*) goes to families with the "instruction" control, a voice
design is put before the text only for families with "voice_design", hidden settings are kept
in the file, and a take made with another instruction is stale."""

from __future__ import annotations

from app import project as projects

COSYVOICE = frozenset({"speed", "instruction", "prompt", "reference", "stream"})
VOXCPM2 = frozenset(
    {"cfg", "timesteps", "prompt", "reference", "voice_design", "lora", "normalize", "stream"}
)


def _project() -> projects.Project:
    p = projects.Project(text="First line.\nSecond line.")
    p.with_settings(voice_design="a calm narrator", instruction="请用四川话表达。")
    return p


def test_each_family_gets_only_the_texts_it_takes(tmp_path):
    p = _project()
    first, second = p.jobs()  # no model known: as VoxCPM2 (the voice design, no instruction)
    assert first.text == "(a calm narrator)First line." and first.instruction == ""
    p.controls = COSYVOICE
    first, second = p.jobs()
    assert (first.text, first.instruction) == ("First line.", "请用四川话表达。")
    p.set_override(
        second.key, projects.SegmentOverride(instruction="Please say a sentence as loudly as possible.")
    )
    assert p.jobs()[1].instruction == "Please say a sentence as loudly as possible."  # a line's own
    p.controls = VOXCPM2
    assert [j.instruction for j in p.jobs()] == ["", ""] and p.jobs()[0].text.startswith("(a calm narrator)")

    path = tmp_path / "script.voxdesk"
    p.save(path)
    again = projects.Project.load(path)
    assert (
        again.settings.instruction == "请用四川话表达。" and again.settings.voice_design == "a calm narrator"
    )
    assert again.overrides[second.key].instruction == "Please say a sentence as loudly as possible."


def test_the_instruction_is_part_of_a_takes_fingerprint():
    p = _project()
    p.controls = COSYVOICE
    before = p.jobs()[0].fingerprint("cv3")
    p.with_settings(instruction="请非常开心地说一句话。")
    assert p.jobs()[0].fingerprint("cv3") != before
    p.with_settings(instruction="")
    plain = p.jobs()[0]
    assert plain.fingerprint("cv3") == projects.SegmentJob(
        plain.key,
        0,
        plain.text,
        plain.display_text,
        plain.voice,
        plain.seed,
        plain.cfg_value,
        plain.inference_timesteps,
        plain.normalize,
        plain.rate,
    ).fingerprint("cv3")  # no instruction: the fingerprint of takes made before instructions existed
