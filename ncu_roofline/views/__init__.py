"""Views: plain, JSON-serialisable data shaped for one output (the HTML page, the Markdown summary)."""
