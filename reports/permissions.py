"""Who may do what with reports. Views, the API and the services ask here, nowhere else.

Everyone signed in reads the matrix and the weekly reports; leads build them on demand and
mark a week reviewed.
"""

from accounts.roles import is_lead


def can_review_reports(user) -> bool:
    return is_lead(user)


def can_build_reports(user) -> bool:
    return is_lead(user)
