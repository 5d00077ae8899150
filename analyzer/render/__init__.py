"""Loading and rendering: read a template (raw Jinja, tokenizer_config, chat_template.json), render
it as transformers does, sandboxed and bounded.
"""
