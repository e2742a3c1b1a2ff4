"""Speaks a text with espeak-ng and writes the audio and espeak's own word events.

    python3 espeak-words.py VOICE RATE OUT.wav OUT.words [PITCH] < text

VOICE may name a variant ("en-us+m7", "es+f3"); RATE is words per minute; PITCH is 0-99 (espeak's
default 50).

OUT.words has one line per word, tab-separated: onset_ms, char_offset (1-based), char_length,
word (the format of ../shared/media/en.words). The onsets are espeak-ng's word events
(espeakEVENT_WORD audio_position), taken from the same synthesis that wrote the audio, so they are
exact for the voice. Only the Python standard library and Debian's libespeak-ng are used.
"""
import ctypes
import sys
import wave

voice, rate, wav_path, words_path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
pitch = int(sys.argv[5]) if len(sys.argv) > 5 else 50
text = sys.stdin.read().strip()

lib = ctypes.CDLL('libespeak-ng.so.1')


class Event(ctypes.Structure):
    _fields_ = [
        ('type', ctypes.c_int), ('unique_identifier', ctypes.c_uint), ('text_position', ctypes.c_int),
        ('length', ctypes.c_int), ('audio_position', ctypes.c_int), ('sample', ctypes.c_int),
        ('user_data', ctypes.c_void_p), ('id', ctypes.c_char * 8),
    ]


EVENT_LIST_TERMINATED, EVENT_WORD = 0, 1
AUDIO_OUTPUT_SYNCHRONOUS, POS_CHARACTER, CHARS_UTF8, RATE, PITCH = 2, 1, 1, 1, 3
CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(Event))

samples = bytearray()
words = []
encoded = text.encode('utf-8')


def on_synth(wav, n, events):
    if n > 0:
        samples.extend(ctypes.string_at(wav, n * 2))
    i = 0
    while events[i].type != EVENT_LIST_TERMINATED:
        e = events[i]
        if e.type == EVENT_WORD:
            words.append((e.audio_position, e.text_position, e.length))
        i += 1
    return 0


callback = CALLBACK(on_synth)
sample_rate = lib.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, None, 0)
if sample_rate <= 0:
    sys.exit('espeak_Initialize failed')
lib.espeak_SetSynthCallback(callback)
if lib.espeak_SetVoiceByName(voice.encode()) != 0:
    sys.exit(f'unknown espeak-ng voice {voice}')
lib.espeak_SetParameter(RATE, rate, 0)
lib.espeak_SetParameter(PITCH, pitch, 0)
buf = ctypes.create_string_buffer(encoded)
if lib.espeak_Synth(buf, len(encoded) + 1, 0, POS_CHARACTER, 0, CHARS_UTF8, None, None) != 0:
    sys.exit('espeak_Synth failed')
lib.espeak_Synchronize()

with wave.open(wav_path, 'wb') as w:
    w.setnchannels(1)
    w.setsampwidth(2)
    w.setframerate(sample_rate)
    w.writeframes(bytes(samples))
# text_position counts characters (1-based), not bytes.
with open(words_path, 'w', encoding='utf-8') as f:
    for onset, pos, length in words:
        f.write(f'{onset}\t{pos}\t{length}\t{text[pos - 1:pos - 1 + length]}\n')
