"""What the apps share: the vocabulary (stages, disciplines, languages), translatable phrases,
ISO weeks, the API's error body, edit histories, translated catalog content, htmx fragments."""
