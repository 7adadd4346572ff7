from accounts.roles import is_lead


def roles(request):
    return {"user_is_lead": is_lead(request.user)}
