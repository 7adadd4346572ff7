from __future__ import annotations

from django.db import connections, models
from django.db.models.expressions import RawSQL

# SQLite's FTS5 trigram index cannot see terms shorter than three characters ("显存"):
# those fall back to LIKE on the base table.
FTS_MIN_TERM = 3


class IncidentQuerySet(models.QuerySet):
    def for_pages(self) -> IncidentQuerySet:
        """What the list rows and the detail page render, without N+1."""
        return self.select_related("reporter").prefetch_related("tags")

    def search(self, query: str) -> IncidentQuerySet:
        """Incidents whose text contains every term of the query, in any language."""
        terms = query.lower().split()
        if not terms:
            return self
        queryset = self
        if connections[self.db].vendor == "sqlite":
            long_terms = [term for term in terms if len(term) >= FTS_MIN_TERM]
            if long_terms:
                match = " AND ".join('"' + term.replace('"', '""') + '"' for term in long_terms)
                queryset = queryset.filter(
                    pk__in=RawSQL(
                        "SELECT rowid FROM incidents_incident_fts "
                        "WHERE incidents_incident_fts MATCH %s",
                        (match,),
                    )
                )
            terms = [term for term in terms if len(term) < FTS_MIN_TERM]
        # PostgreSQL serves LIKE from the pg_trgm GIN index on search_document.
        for term in terms:
            queryset = queryset.filter(search_document__contains=term)
        return queryset


class SignatureQuerySet(models.QuerySet):
    def enabled(self) -> SignatureQuerySet:
        return self.filter(enabled=True)
