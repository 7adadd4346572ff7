"""The product's fixed vocabulary, as codes: pipeline stages, prevention disciplines and the
languages the product speaks. Plain Python, so that the engine shares it; the labels people
read are in `common.choices`."""

STAGES = ("build", "data", "train", "serve")
DISCIPLINES = ("version-lock", "validate-first", "tiny-sample", "reconcile")
LANGUAGES = ("en", "zh-hans")
