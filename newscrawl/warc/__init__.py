"""Web archives in and out: read WARC/ARC files robustly (`reader`), write a crawl's responses
as WARC/1.1 (`writer`). The WARC format itself is warcio's business."""
