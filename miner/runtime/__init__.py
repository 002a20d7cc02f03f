"""Running the pipeline: `mine` drives extraction into the store one transcript at a time, `locks`
lets any number of hooks and miners run at once, `pending` tells a transcript with nothing new from
the watermark alone (so that no miner is built for it), `watch` mines transcripts as they are written, and
`exclusions` names the projects that are never mined. `miner.worker` and `miner.hooks` stay at the
package's top, where installed settings files expect them.
"""
