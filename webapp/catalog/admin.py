from django.contrib import admin, messages
from django.core.exceptions import ValidationError

from webapp.catalog.models import ModelSpec, Word, WordList, WordListEntry
from webapp.catalog.services import (
    PUBLISH_MIN_VALID,
    model_spec_publish,
    model_spec_unpublish,
)
from webapp.core.exceptions import ApplicationError


@admin.register(Word)
class WordAdmin(admin.ModelAdmin):
    list_display = ("text", "zipf_frequency", "created_at")
    search_fields = ("text",)
    list_filter = ("word_lists__name",)


class WordListEntryInline(admin.TabularInline):
    model = WordListEntry
    extra = 0
    raw_id_fields = ("word",)
    fields = ("word", "split", "category", "difficulty", "solve_rate", "mean_questions")
    show_change_link = True

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("word")


@admin.register(WordList)
class WordListAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "version",
        "entry_count",
        "source",
        "license",
        "curation_job",
        "created_at",
    )
    list_filter = ("name", "license")
    search_fields = ("name", "description", "source")
    raw_id_fields = ("parent", "curation_job", "created_by")

    @admin.display(description="words")
    def entry_count(self, obj):
        return obj.entries.count()


@admin.register(WordListEntry)
class WordListEntryAdmin(admin.ModelAdmin):
    list_display = ("word", "word_list", "split", "category", "difficulty", "solve_rate")
    list_filter = ("split", "word_list__name", "category")
    search_fields = ("word__text",)
    raw_id_fields = ("word", "word_list")
    list_select_related = ("word", "word_list")


@admin.register(ModelSpec)
class ModelSpecAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "kind",
        "role",
        "path",
        "endpoint",
        "adapter_path",
        "is_active",
        "published",
        "produced_by",
        "created_at",
    )
    list_filter = ("kind", "role", "is_active", "published")
    search_fields = ("name", "path", "endpoint", "description")
    raw_id_fields = ("parent", "produced_by")
    readonly_fields = ("published",)  # changed by the actions only: publishing has a check
    actions = ["evaluate_models", "publish_models", "unpublish_models"]

    @admin.action(
        description="Publish: offer these guessers to players (needs an evaluation with "
        f"{PUBLISH_MIN_VALID:.0%}% valid questions)"  # %%: the admin formats descriptions
    )
    def publish_models(self, request, queryset):
        for spec in queryset:
            try:
                model_spec_publish(spec=spec)
            except ApplicationError as exc:
                self.message_user(request, exc.message, messages.ERROR)
            else:
                self.message_user(request, f"Published {spec.name}: it is offered to players.")

    @admin.action(description="Unpublish: stop offering these models to players")
    def unpublish_models(self, request, queryset):
        for spec in queryset:
            model_spec_unpublish(spec=spec)
        self.message_user(
            request, f"Unpublished {queryset.count()} model(s): no longer offered to players."
        )

    @admin.action(description="Evaluate these models (KB judge, dbrl/paper_test, k=8)")
    def evaluate_models(self, request, queryset):
        from webapp.jobs.kinds.evaluation import standard_evaluation
        from webapp.jobs.services import job_submit

        for spec in queryset:
            if not spec.can_guess:
                self.message_user(
                    request, f"{spec.name} is not a guesser; skipped", messages.WARNING
                )
                continue
            try:
                job = job_submit(
                    kind="evaluation", user=request.user, params=standard_evaluation(spec.name)
                )
            except ValidationError as exc:
                self.message_user(
                    request, f"{spec.name}: {'; '.join(exc.messages)}", messages.ERROR
                )
            except ApplicationError as exc:  # stored, but the broker is down: the sweep sends it
                self.message_user(request, f"{spec.name}: {exc.message}", messages.WARNING)
            else:
                self.message_user(request, f"Queued evaluation job {job.pk} for {spec.name}.")
