"""The part of `Store` that `miner team` stands on (a mixin): which team memory each local one is.

`team_map` pairs a local memory with its team memory and keeps what the local one
was (`synced`, a signature) when the two were last in step, so that what changed
since is what a sync pushes. `team_shared` holds the preferences a user shared
with the team (preferences are personal otherwise). `team_sync` keeps, per team
and project, how far the pull has read and the last sync's figures.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs import time on the hook path
if TYPE_CHECKING:
    from typing import Iterable


class TeamQueries:
    """The local side of team sync: the map to team memories, shared preferences, sync state."""

    def team_map(self, team: str) -> dict[int, tuple[int, str]]:
        """{local id: (team memory id, signature when last in step)} of one team."""
        return {row[0]: (row[1], row[2]) for row in self._tuples(
            "SELECT local_id, remote_id, synced FROM team_map WHERE team = ?", (team,))}

    def set_team_map(self, team: str, rows: Iterable[tuple[int, int, str]]) -> None:
        """(local id, team memory id, signature) rows; inside `atomic()`."""
        self.db.executemany(
            """INSERT INTO team_map (local_id, team, remote_id, synced) VALUES (?, ?, ?, ?)
               ON CONFLICT (local_id) DO UPDATE SET team = excluded.team, remote_id = excluded.remote_id,
               synced = excluded.synced""",
            [(local, team, remote, synced) for local, remote, synced in rows])

    def team_shared(self) -> set[int]:
        """Ids of the preferences shared with the team."""
        return {row[0] for row in self._tuples("SELECT local_id FROM team_shared")}

    def set_team_shared(self, memory_id: int, shared: bool) -> None:
        """Share a preference with the team, or stop; inside `atomic()`."""
        if shared:
            self.db.execute("INSERT OR IGNORE INTO team_shared (local_id) VALUES (?)", (memory_id,))
        else:
            self.db.execute("DELETE FROM team_shared WHERE local_id = ?", (memory_id,))

    def team_state(self, team: str, project: str) -> dict[str, str]:
        """What a team's sync of a project keeps: cursors and the last sync's figures."""
        return {row[0]: row[1] for row in self._tuples(
            "SELECT key, value FROM team_sync WHERE team = ? AND project = ?", (team, project))}

    def set_team_state(self, team: str, project: str, values: dict[str, object]) -> None:
        """Set some of a project's sync state; inside `atomic()`."""
        self.db.executemany(
            """INSERT INTO team_sync (team, project, key, value) VALUES (?, ?, ?, ?)
               ON CONFLICT (team, project, key) DO UPDATE SET value = excluded.value""",
            [(team, project, key, str(value)) for key, value in values.items()])

    def clear_teams(self) -> None:
        """Forget every sync of every team (`miner team leave --all` when the team's settings cannot be read); inside
        `atomic()`."""
        self.db.execute("DELETE FROM team_sync")
        self.db.execute("DELETE FROM team_map")

    def clear_team_project(self, team: str, project: str) -> None:
        """Forget this machine's sync of a project (it left the team): joining again pushes what it has,
        merged, never doubled, and pulls the team's whole; inside `atomic()`."""
        self.db.execute("DELETE FROM team_sync WHERE team = ? AND project = ?", (team, project))
        self.db.execute("DELETE FROM team_map WHERE team = ? AND local_id IN (SELECT id FROM memories WHERE project = ?)",
                        (team, project))
