"""``voxdesk serve``: an OpenAI-compatible speech server over the shared engine (Qt-free).

``app.py`` builds the Starlette application, ``protocol.py`` reads and checks request bodies,
``formats.py`` encodes audio, ``run.py`` starts uvicorn on a socket (CLI, window, tests).
"""
