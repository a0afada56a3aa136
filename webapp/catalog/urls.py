from django.urls import path

from webapp.catalog import views

app_name = "catalog"
urlpatterns = [
    path("", views.word_lists, name="word-lists"),
    path("compare/", views.word_list_compare, name="compare"),
    path("<int:pk>/", views.word_list_detail, name="word-list"),
    path("<int:pk>/download/<slug:fmt>/", views.word_list_download, name="download"),
]
