"""The parse side: request options, the message model, mapping parse events to an OpenAI message,
streaming, problem reports.
"""
