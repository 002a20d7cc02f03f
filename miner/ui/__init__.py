"""The local web viewer (`miner ui`): see, search and correct the memory, and what a session will be told.

An optional extra (Flask, Flask-WTF, waitress); the hooks never import it. `app` holds the pages and the
edits, `pages` what each page shows, `security` the token, CSRF and headers, `server` the serving.
"""
