"""`miner eval`: extraction and restore per transcript (`transcripts`), cross-session recall on whole
projects (`multi`), recall when a question is asked (`prompt`), and rule tuning (`tune`)."""
