"""The pages: boards, overlays, the pit, `/screen`, the rules and fairness pages (`boards`, `rules`), the operator page
and the dealer's keypad (`operator`), the pages' words (`strings`, `/api/look`: `look`), languages (`babel`) and fonts
(`fonts`)."""
