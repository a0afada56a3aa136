from django.contrib import admin, messages

from webapp.core.admin import ViewOnly, ViewOnlyAdmin, ViewOnlyInline
from webapp.labelling.models import Assignment, DisagreementItem, JudgeVote, Label


@admin.register(JudgeVote)
class JudgeVoteAdmin(ViewOnlyAdmin):
    list_display = ("secret", "question", "judge_name", "verdict", "p_yes", "item", "created_at")
    list_filter = ("judge_name", "verdict")
    search_fields = ("secret", "question", "judge_name")
    raw_id_fields = ("item", "turn", "judge_spec", "user", "job")


class LabelInline(ViewOnlyInline):
    model = Label
    raw_id_fields = ("annotator",)


@admin.register(DisagreementItem)
class DisagreementItemAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "secret",
        "question",
        "is_control",
        "uncertainty",
        "labels_count",
        "labels_needed",
        "gold",
        "created_at",
    )
    # by job: a researcher can withdraw an oversized job's unlabelled items (the games they hide
    # show again)
    list_filter = ("is_control", "gold", ("job", admin.RelatedOnlyFieldListFilter))
    actions = ["withdraw"]
    search_fields = ("secret", "question")
    raw_id_fields = ("source_turn", "job", "adjudicated_by")
    inlines = [LabelInline]

    @admin.action(
        description="Withdraw the selected unlabelled items (their games show again)",
        permissions=["delete"],
    )
    def withdraw(self, request, queryset):
        from webapp.labelling.services import items_withdraw

        withdrawn, kept = items_withdraw(queryset)
        self.message_user(
            request,
            f"Withdrew {withdrawn} items; kept {kept} with labels or gold.",
            messages.SUCCESS,
        )


class ItemAnnotatorAdmin(admin.ModelAdmin):
    """Rows of one annotator on one item (labels, assignments): found by the item or the person."""

    search_fields = ("item__secret", "item__question", "annotator__username")
    raw_id_fields = ("item", "annotator")


@admin.register(Label)
class LabelAdmin(ViewOnly, ItemAnnotatorAdmin):
    list_display = ("item", "annotator", "verdict", "seconds", "created_at")
    list_filter = ("verdict",)


@admin.register(Assignment)
class AssignmentAdmin(ItemAnnotatorAdmin):
    list_display = ("item", "annotator", "created_at", "expires_at", "skipped_at")
    list_filter = ("skipped_at",)
