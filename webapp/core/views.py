from django.shortcuts import render

from webapp.catalog.selectors import word_list_summaries


def home(request):
    return render(request, "core/home.html", {"word_lists": word_list_summaries()})
