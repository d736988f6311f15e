"""LoRA fine-tuning of a voice (Qt-free): the data set (``clips``, ``slicer``), sizing to the card
(``plan``), the training maths (``lora``, ``forward``, ``trainer``), the resumable run with its
validation (``job``, ``validate``, ``speaker``) and ``voxdesk train`` (``cli``)."""
