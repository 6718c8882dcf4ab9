"""Re-rooting markup nested past the parser's depth limit (newscrawl.html.nesting)."""

from __future__ import annotations

from newscrawl.html.nesting import flatten_nesting


def test_outer_and_inner_levels_stay_and_the_middle_wrappers_go() -> None:
    markup = "<div>" * 10 + "<p>x <b>y</b></p>" + "</div>" * 10
    flat = flatten_nesting(markup, top=2, bottom=3)
    assert flat == "<div><div><div><p>x <b>y</b></p></div></div></div>"


def test_shallow_markup_is_written_back_unchanged() -> None:
    markup = (
        '<!DOCTYPE html><html><head><script>if (a < b) x = "</div>";</script></head>'
        "<body><p class='a'>Fish &amp; chips<br><img src=x.png> caf&#233;</p><!-- c --></body>"
        "</html>"
    )
    assert flatten_nesting(markup) == markup.replace("&#233;", "é")


def test_unclosed_siblings_and_stray_end_tags_do_not_deepen_the_tree() -> None:
    markup = "<ul>" + "<li>item" * 50 + "</ul></span>"
    assert flatten_nesting(markup, top=1, bottom=2) == markup
