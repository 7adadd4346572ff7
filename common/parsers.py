"""The API's JSON parser, refusing a body nested too deep to decode with a 400.

Python's json module raises RecursionError (not a ValueError) on a body nested about a
thousand levels deep, which DRF's parser does not catch: the request would end in a 500.
"""

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deep.") from None
