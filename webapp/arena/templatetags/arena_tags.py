"""{% arena_board as arena %}: the newest Arena snapshot, for the leaderboards page."""

from django import template

from webapp.arena.board import ARENA
from webapp.leaderboards.selectors import leaderboard_latest

register = template.Library()


@register.simple_tag
def arena_board():
    return leaderboard_latest(ARENA)
