"""The words and their times: Whisper's transcript of the song, or lyrics a person already has, timed."""
