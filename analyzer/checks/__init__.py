"""Checks of the whole pipeline: llama.cpp's parse vectors and the render-and-parse-back round
trip.
"""
