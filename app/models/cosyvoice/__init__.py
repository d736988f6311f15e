"""The CosyVoice2 / CosyVoice3 family (issue 18): its config reader and tiny-folder writer so far;
the plan for the rest is docs/cosyvoice_plan.md."""
