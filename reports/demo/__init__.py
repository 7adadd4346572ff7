"""Demo history: `demo_generate` fills weeks of realistic use, `demo_clear` takes it out."""

from reports.demo.history import DemoResult, demo_clear, demo_generate
from reports.demo.rows import DEMO_PREFIX

__all__ = ["DEMO_PREFIX", "DemoResult", "demo_clear", "demo_generate"]
