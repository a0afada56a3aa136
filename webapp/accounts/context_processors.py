from webapp.accounts.roles import is_annotator, is_researcher


def roles(request):
    user = getattr(request, "user", None)
    return {"is_researcher": is_researcher(user), "is_annotator": is_annotator(user)}
