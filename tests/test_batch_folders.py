"""`musicvid batch` over real-world folders and playlists: what a folder holds besides its songs (hidden files, links to
nowhere, pipes, folders named like songs, other suffixes, songs in subfolders), playlists written elsewhere (Windows
paths, macOS's decomposed names, file:// URLs), the lyrics beside a song, and a row's label. The renders are faked
where a test needs only what the batch decides."""

import os
import unicodedata
from pathlib import Path

import pytest

from musicvid.batch.folder import AUDIO_SUFFIXES
from musicvid.batch.names import row_hash
from musicvid.batch.playlist import Entry, Job, read_playlist
from musicvid.core.errors import UserError
from musicvid.core.outputs import remember
from musicvid.core.workdir import Workdir
from tests.helpers import make_tone, work_directory
from tests.test_batch_hostile2 import faked_renders, report_of, run_batch
from tests.test_batch_plan import planned

LRC = "[00:00.10]la la la\n"
SRT = "1\n00:00:00,100 --> 00:00:00,800\nla la la\n"


def folder_of(tmp_path: Path, *songs: str) -> Path:
    folder = tmp_path / "songs"
    folder.mkdir()
    for name in songs:
        make_tone(folder / name, 1)
    return folder


def names(entries: list[Entry]) -> list[str]:
    return [entry.path.name for entry in entries]


def test_a_folder_skips_hidden_files_and_says_how_many(tmp_path, capsys, monkeypatch, caplog):
    """macOS leaves a `._x.mp3` beside each song on FAT, exFAT and network shares: it was a row that failed in every
    rerun; a hidden song made a hidden video."""
    rendered = faked_renders(monkeypatch)
    folder = folder_of(tmp_path, "good.wav", ".hidden.wav")
    (folder / "._good.wav").write_bytes(b"\0\5\26\7\0\2\0\0Mac OS X        ")
    for name in (".DS_Store", "cover.jpg", "notes.txt", "album.cue"):
        (folder / name).write_text("x")
    code, err = run_batch(capsys, folder, tmp_path / "out")
    assert code == 0 and rendered == [1], err
    assert [Path(row["song"]).name for row in report_of(tmp_path / "out")] == ["good.wav"]
    [note] = caplog.messages
    assert (
        note
        == f"{folder}: 2 hidden files skipped (names starting with '.', as macOS's ._ are): ._good.wav, .hidden.wav"
    )


def test_links_to_nowhere_loops_and_pipes_in_a_folder_fail_at_their_turn_and_a_folder_named_as_a_song_is_said(
    tmp_path, capsys, monkeypatch, caplog
):
    rendered = faked_renders(monkeypatch)
    folder = folder_of(tmp_path, "good.wav")
    (folder / "broken.wav").symlink_to("nowhere.wav")
    (folder / "loop.wav").symlink_to("loop.wav")
    os.mkfifo(folder / "pipe.wav")
    (folder / "dir.wav").mkdir()
    code, err = run_batch(capsys, folder, tmp_path / "out")
    assert code == 1 and rendered == [2], err
    rows = {Path(row["song"]).name: (row["status"], row["error"]) for row in report_of(tmp_path / "out")}
    assert list(rows) == ["broken.wav", "good.wav", "loop.wav", "pipe.wav"]
    assert rows["good.wav"] == ("done", "")
    assert rows["broken.wav"] == ("failed", f"audio file {folder / 'broken.wav'} is a broken link, to nowhere.wav")
    assert rows["loop.wav"][0] == "failed" and "symbolic links" in rows["loop.wav"][1]
    assert rows["pipe.wav"][0] == "failed" and "not a regular file" in rows["pipe.wav"][1]
    assert caplog.messages == [f"{folder}: dir.wav: a folder, not a song: skipped"]


def test_a_folder_takes_what_ffmpeg_reads_as_audio_and_names_files_of_other_suffixes(tmp_path, caplog):
    assert {".mka", ".oga", ".spx", ".opus", ".mp2", ".m4b", ".ape", ".wv", ".tta", ".dsf", ".dff"} <= AUDIO_SUFFIXES
    assert {".mpc", ".caf", ".aifc", ".amr", ".ac3"} <= AUDIO_SUFFIXES
    folder = folder_of(tmp_path, "a.mka", "c.oga", "d.mp2", "E.M4B")
    for name in ("cover.jpg", "b.lrc", "old.mp4", "report.json", "song.mid", "README"):
        (folder / name).write_text("x")
    assert names(read_playlist(folder)) == ["E.M4B", "a.mka", "c.oga", "d.mp2"]
    assert caplog.messages == [f"{folder}: 2 files skipped, not audio by their suffix: README, song.mid"]


def test_a_folder_of_albums_says_its_songs_are_in_subfolders_and_a_mixed_one_counts_those_not_read(tmp_path, caplog):
    music = tmp_path / "Music"
    for album in ("Artist A/Album X", "Artist B/Album Y"):
        (music / album).mkdir(parents=True)
        (music / album / "01 Track.mp3").write_bytes(b"x")
    for uncounted in (".Trash/a.mp3", "musicvid-work/a-1234/vocals.wav", "videos/mine.mp3", "Album Z/._01.mp3"):
        (music / uncounted).parent.mkdir(parents=True, exist_ok=True)
        (music / uncounted).write_bytes(b"x")
    (music / "linked").symlink_to(music / "Artist A")  # a folder linked to is not walked into
    with pytest.raises(UserError) as refused:
        read_playlist(music, music / "videos")
    assert str(refused.value) == (
        f"{music}: no audio files directly in it (2 audio files in its subfolders: a batch reads one folder's files; "
        "give an album's folder, or a playlist)"
    )
    (music / "loose.mp3").write_bytes(b"x")
    assert names(read_playlist(music, music / "videos")) == ["loose.mp3"]
    assert caplog.messages == [
        f"{music}: 2 audio files in its subfolders not read (a batch reads one folder's files: give a playlist for those)"
    ]


def test_a_windows_playlist_finds_its_songs_and_a_drive_path_is_said_to_be_one(tmp_path):
    (tmp_path / "Music" / "Artist").mkdir(parents=True)
    (tmp_path / "Music" / "Artist" / "one.mp3").write_bytes(b"x")
    (tmp_path / "back\\slash.mp3").write_bytes(b"x")  # a name that holds one is taken as it is
    playlist = tmp_path / "self.m3u"
    playlist.write_bytes(b"\xef\xbb\xbf#EXTM3U\r\nMusic\\Artist\\one.mp3\r\nback\\slash.mp3\r\nNo\\Such\\song.mp3\r\n")
    assert [entry.path for entry in read_playlist(playlist)] == [
        tmp_path / "Music/Artist/one.mp3",
        tmp_path / "back\\slash.mp3",
        tmp_path / "No\\Such\\song.mp3",  # (fails at its turn, named as written)
    ]


def test_a_drive_path_or_a_url_in_a_playlist_fails_its_row_and_the_others_render(tmp_path, capsys, monkeypatch):
    """A playlist's line naming a song on another machine stopped the whole batch (exit 2)."""
    rendered = faked_renders(monkeypatch)
    folder = folder_of(tmp_path, "one.wav")
    playlist = folder / "mixed.m3u"
    playlist.write_text("C:\\Users\\me\\Music\\two.mp3\none.wav\nhttps://example.com/three.mp3\n")
    code, err = run_batch(capsys, playlist, tmp_path / "out")
    assert code == 1 and rendered == [2], err
    drive, done, url = report_of(tmp_path / "out")
    assert drive["status"] == url["status"] == "failed" and done["status"] == "done"
    assert drive["error"].endswith(
        "mixed.m3u line 1: C:\\Users\\me\\Music\\two.mp3 is a Windows path: give its path on this machine"
    )
    assert "line 3: https://example.com/three.mp3 is a URL; a batch renders audio files on this machine" in url["error"]


def test_an_entry_finds_its_song_under_another_unicode_form(tmp_path):
    """macOS keeps names decomposed (NFD): a playlist written elsewhere names them composed (NFC)."""
    album = tmp_path / unicodedata.normalize("NFD", "Café del Mar")
    album.mkdir()
    (album / unicodedata.normalize("NFD", "Déjà vu.mp3")).write_bytes(b"x")
    playlist = tmp_path / "list.m3u8"
    playlist.write_text("Café del Mar/Déjà vu.mp3\n")
    [entry] = read_playlist(playlist)
    assert entry.path == album / unicodedata.normalize("NFD", "Déjà vu.mp3") and entry.path.is_file()


def test_a_file_url_of_this_machine_is_its_path_and_another_url_fails_its_row(tmp_path):
    (tmp_path / "my song #1.mp3").write_bytes(b"x")
    url = (tmp_path / "my song #1.mp3").as_uri()  # file:///…/my%20song%20%231.mp3, as VLC saves it
    playlist = tmp_path / "vlc.m3u8"
    playlist.write_text(f"#EXTM3U\n{url}\n{url.replace('file://', 'file://localhost')}\n")
    assert [entry.path for entry in read_playlist(playlist)] == [tmp_path / "my song #1.mp3"] * 2
    for url in ("file://nas/music/a.mp3", "https://example.com/a.mp3"):
        playlist.write_text(f"{url}\n")
        [entry] = read_playlist(playlist)
        assert f"line 1: {url} is a URL; a batch renders audio files on this machine" in entry.refused


def test_the_lyrics_beside_a_song_are_its_rows_lyrics_as_a_csv_cell_would_be(tmp_path, capsys, caplog, monkeypatch):
    folder = tmp_path / "songs"
    folder.mkdir()
    for stem in ("lrc", "srt", "both", "none", "video", "Case", "Twice"):
        make_tone(folder / f"{stem}.wav", 1)
    # (case.LRC beside Case.wav is its lyrics; twice.lrc and TWICE.lrc beside Twice.wav: neither is more its own)
    for name in ("lrc.lrc", "srt.srt", "both.lrc", "both.srt", "video.srt", "case.LRC", "twice.lrc", "TWICE.lrc"):
        (folder / name).write_text(SRT if name.endswith(".srt") else LRC)
    (folder / "video.mp4").write_bytes(b"a video")  # video.srt is its captions, as a batch writes them
    jobs = planned(folder)
    lyrics = {job.entry.path.stem: job.request.lyrics_file for job in jobs}
    assert lyrics == {
        "Case": folder / "case.LRC",
        "Twice": None,
        "both": folder / "both.lrc",
        "lrc": folder / "lrc.lrc",
        "none": None,
        "srt": folder / "srt.srt",
        "video": None,
    }
    faked_renders(monkeypatch)
    code, err = run_batch(capsys, folder, tmp_path / "out")  # (said once every row is checked)
    assert code == 0 and [m for m in caplog.messages if ": lyrics" in m] == [
        f"{folder} song 1 (Case.wav): lyrics case.LRC",
        f"{folder} song 3 (both.wav): lyrics both.lrc",
        f"{folder} song 4 (lrc.wav): lyrics lrc.lrc",
        f"{folder} song 6 (srt.wav): lyrics srt.srt",
    ], err
    os.mkfifo(folder / "none.lrc")  # a pipe was left out unsaid: refused, as the CSV cell naming it is, alone
    code, err = run_batch(capsys, folder, tmp_path / "out")
    assert (
        code == 2
        and err
        == f"musicvid: {folder} song 5 (none.wav): {folder / 'none.lrc'} is not a regular file (a pipe or a device?); give the lyrics file itself\n"
    )
    # a video's captions at the lyrics' name leave the lyrics in another case its own (a batch rerun into the folder)
    (folder / "VIDEO.SRT").write_text(SRT)
    assert {job.entry.path.stem: job.request.lyrics_file for job in planned(folder)}["video"] == folder / "VIDEO.SRT"
    # An M3U's song in another folder: its lyrics are named from the playlist's folder, as a CSV's cell is
    (tmp_path / "list.m3u").write_text("songs/lrc.wav\n")
    [job] = planned(tmp_path / "list.m3u")
    assert job.request.lyrics_file == tmp_path / "songs" / "lrc.lrc"
    (tmp_path / "list.m3u").write_text("songs/lrc.lrc\n")  # an entry that is lyrics is not its own song's lyrics
    [job] = planned(tmp_path / "list.m3u")
    assert job.request.lyrics_file is None


def test_lyrics_put_beside_a_song_rename_no_video():
    plain, beside = Entry(Path("a.wav")), Entry(Path("a.wav"), overrides={"lyrics": "a.lrc"}, lyrics_beside="a.lrc")
    assert row_hash(plain) == row_hash(beside) != row_hash(Entry(Path("a.wav"), overrides={"lyrics": "a.lrc"}))


def test_a_batch_into_its_songs_folder_never_reads_its_own_srt_as_lyrics(tmp_path, capsys, monkeypatch):
    """-o the songs' folder: the batch writes good.mp4 and good.srt beside good.wav; a rerun takes good.srt for the
    video's captions, not the song's lyrics (no output is ever an input), and skips the row; so too with the video
    deleted (its work directory records good.srt's bytes): the row is made again, without lyrics."""
    monkeypatch.chdir(tmp_path)  # where the song's work directory is: musicvid-work/
    folder = folder_of(tmp_path, "good.wav")
    made = []

    def render_locally(registry, jobs, finished):  # as a render leaves its outputs, recorded as musicvid's
        from musicvid.batch.report import Result

        for job in jobs:
            made.append(job.request.lyrics_file)
            workdir = Workdir(work_directory(Workdir.of_song(job.request.song, job.request.workdir).root))
            for path in job.settings.outputs(job.output):
                path.write_text("1\n00:00:00,000 --> 00:00:01,000\nla\n")
                remember(workdir, path, path)
            finished(job, Result(str(job.entry.path), "done", str(job.output), 1.0))

    monkeypatch.setattr("musicvid.batch.command.render_locally", render_locally)
    assert run_batch(capsys, folder, folder)[0] == 0 and made == [None]
    code, err = run_batch(capsys, folder, folder)
    assert code == 0 and made == [None] and "lyrics" not in err, err
    assert [row["status"] for row in report_of(folder)] == ["skipped"]
    (folder / "good.mp4").unlink()
    code, err = run_batch(capsys, folder, folder)
    assert code == 0 and made == [None, None] and "lyrics" not in err, err
    assert [row["status"] for row in report_of(folder)] == ["done"]


def test_a_persons_srt_beside_a_song_is_never_written_over_by_its_video(tmp_path, capsys, monkeypatch):
    rendered = faked_renders(monkeypatch)
    folder = folder_of(tmp_path, "good.wav")
    (folder / "good.srt").write_text("1\n00:00:00,100 --> 00:00:00,900\nmy words\n")
    code, err = run_batch(capsys, folder, folder)  # its video named as render names it there: good.video.mp4
    assert code == 0 and rendered == [1] and report_of(folder)[0]["output"] == str(folder / "good.video.mp4"), err
    assert (folder / "good.srt").read_text() == "1\n00:00:00,100 --> 00:00:00,900\nmy words\n"


@pytest.mark.parametrize("out", ["songs", "videos"])
def test_a_persons_srt_lyrics_stay_the_songs_lyrics_beside_captions_made_of_them(tmp_path, capsys, monkeypatch, out):
    """The captions a render makes of a person's .srt lyrics hold its bytes: recorded as the run's, they made the
    person's file look like the run's own, so a rerun took it for captions (refused there, or rendered without it)."""
    monkeypatch.chdir(tmp_path)
    folder = folder_of(tmp_path, "good.wav")
    lyrics = "1\n00:00:00,100 --> 00:00:00,900\nmy words\n"
    (folder / "good.srt").write_text(lyrics)
    made = []

    def render_locally(registry, jobs, finished):  # as a render writes its outputs: the .srt as the lyrics read
        from musicvid.batch.report import Result

        for job in jobs:
            made.append(job.request.lyrics_file)
            workdir = Workdir(work_directory(Workdir.of_song(job.request.song, job.request.workdir).root))
            for path in job.settings.outputs(job.output):
                path.write_text(lyrics)
                remember(workdir, path, path)
            finished(job, Result(str(job.entry.path), "done", str(job.output), 1.0))

    monkeypatch.setattr("musicvid.batch.command.render_locally", render_locally)
    for size in ("64x64", "64x64", "128x128"):  # the same settings (skipped), then others (made again)
        code, err = run_batch(capsys, folder, tmp_path / out, "--size", size)
        assert code == 0, err
    assert made == [folder / "good.srt"] * 2 and (folder / "good.srt").read_text() == lyrics


def test_a_rows_label_shows_a_control_character_in_its_songs_name_as_its_code_point():
    job = Job(1, Entry(Path("songs/a\nb.mp3")), None, None)
    assert job.label == "song 1 (aU+000Ab.mp3)" and "\n" not in job.where(Path("songs"))


def test_an_m3u_song_named_with_a_hash_is_a_song_and_an_extinf_names_only_the_entry_after_it(tmp_path, caplog):
    """`#9 Dream.mp3` was read as a comment, and its #EXTINF titled the next song: a video of one under another's name."""
    for name in ("#9 Dream.mp3", "other.mp3", "b.mp3", "c.mp3", "#EXTended.mp3"):
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "list.m3u").write_text(
        "#EXTM3U\n#EXTINF:2,John Lennon - #9 Dream\n\n#EXTGRP:x\n#9 Dream.mp3\n"
        "#EXTINF:2,Lost\n# a comment\nother.mp3\n#EXTINF:2,B\nb.mp3\nc.mp3\n#EXTended.mp3\n"
    )
    rows = [(entry.path.name, entry.title, entry.artist) for entry in read_playlist(tmp_path / "list.m3u")]
    assert rows == [("#9 Dream.mp3", "#9 Dream", "John Lennon"), ("other.mp3", None, None), ("b.mp3", "B", None)] + [
        ("c.mp3", None, None)
    ]
    playlist = tmp_path / "list.m3u"
    assert caplog.messages == [
        f"{playlist} line 5: #9 Dream.mp3 names a file beside it: taken as a song",
        f"{playlist} line 12: #EXTended.mp3 reads as a directive: write ./#EXTended.mp3",
    ]


@pytest.mark.parametrize("kind", ["m3u", "csv"])
def test_a_utf16_playlist_is_read_and_one_without_its_mark_is_said_to_be_utf16(tmp_path, kind):
    """Notepad's "Unicode", PowerShell 5's `>` and Excel's "Unicode text" write UTF-16: it was read as Latin-1."""
    (tmp_path / "Café.mp3").write_bytes(b"x")
    text = "Café.mp3\r\n" if kind == "m3u" else "path,title\r\nCafé.mp3,Ça va\r\n"
    for encoding in ("utf-16", "utf-16-be", "utf-8-sig"):
        marked = text.encode(encoding) if encoding != "utf-16-be" else b"\xfe\xff" + text.encode(encoding)
        (tmp_path / f"p.{kind}").write_bytes(marked)
        assert names(read_playlist(tmp_path / f"p.{kind}")) == ["Café.mp3"]
    (tmp_path / f"p.{kind}").write_bytes(text.encode("utf-16-le"))
    with pytest.raises(UserError) as refused:
        read_playlist(tmp_path / f"p.{kind}")
    assert str(refused.value) == (
        f"{tmp_path / f'p.{kind}'} holds NUL bytes: it is UTF-16 (or binary), not text musicvid reads: save it as UTF-8"
    )


def test_a_song_whose_name_is_not_utf8_fails_at_its_turn_and_the_others_render(tmp_path, capsys, monkeypatch):
    """A Latin-1 name from an old Windows disk (`Caf\\xe9.wav`) stopped the whole folder's batch (exit 2)."""
    rendered = faked_renders(monkeypatch)
    folder = folder_of(tmp_path, "good.wav", os.fsdecode(b"Caf\xe9.wav"))
    code, err = run_batch(capsys, folder, tmp_path / "out")
    assert code == 1 and rendered == [2], err
    failed, done = report_of(tmp_path / "out")
    assert failed["song"] == f"{folder}/Caf\\xe9.wav" and failed["status"] == "failed"
    assert "the name Caf\\xe9.wav is not UTF-8" in failed["error"] and "rename it in UTF-8" in failed["error"]
    assert done["status"] == "done" and Path(failed["output"]).name == "Caf-.mp4"


def test_a_missing_song_named_in_latin1_is_said_to_be_missing(tmp_path, capsys, monkeypatch):
    """A file:// URL escaping a Latin-1 é (`caf%E9.mp3`) for a song that is not there was failed as a name that
    is not UTF-8, sending its user to rename a file that does not exist."""
    rendered = faked_renders(monkeypatch)
    make_tone(tmp_path / "good.wav", seconds=1.0)
    playlist = tmp_path / "list.m3u"
    playlist.write_text(f"{tmp_path.as_uri()}/caf%E9.mp3\ngood.wav\n")
    code, err = run_batch(capsys, playlist, tmp_path / "out")
    assert code == 1 and rendered == [2], err
    failed, _ = report_of(tmp_path / "out")
    assert failed["error"] == f"audio file not found: {tmp_path}/caf\\xe9.mp3"
