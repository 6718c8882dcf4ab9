"""The shipped models, installed as ``newscrawl.models``: the template model format
(`template_model`), the default template model and the learned extractor model, both trained on
real pages and rebuilt by ``newscrawl models build ../shared/data``."""

from newscrawl.models.template_model import (
    ModelError,
    TemplateModel,
    bundled_model_path,
    load_model,
)

__all__ = ["ModelError", "TemplateModel", "bundled_model_path", "load_model"]
