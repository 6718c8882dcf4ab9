"""Trained template models: the one-file model format (`template_model`) and a small bundled
default model trained on generated sites only (`default_template_model.json`; rebuild it with
``python -m newscrawl.template.synthetic models/default_template_model.json``)."""

from models.template_model import ModelError, TemplateModel, bundled_model_path, load_model

__all__ = ["ModelError", "TemplateModel", "bundled_model_path", "load_model"]
