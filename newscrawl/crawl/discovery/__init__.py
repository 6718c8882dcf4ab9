"""What the spider follows: `site_lists` (the sites of a run), `feeds` (safe sitemap and feed
parsing), `links` (the hrefs a site's pages share, resolved once per site) and `traps`
(URL shapes that never end).
"""
