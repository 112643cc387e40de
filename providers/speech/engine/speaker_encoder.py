"""Speaker embeddings for diarization: Resemblyzer's GE2E voice encoder run with numpy alone.

The weights are Resemblyzer 0.1.4's `pretrained.pt` (PyPI wheel, Apache-2.0; scripts/engines-speech.mjs provisions it,
sha256-pinned). The package itself needs torch and librosa; this port needs neither: a PyTorch legacy checkpoint is a
pickle whose tensors point at raw storages written after it, read here into numpy arrays, and the network is small
(40-channel mel spectrogram of 16 kHz audio, 25 ms windows, 10 ms hop; 3-layer LSTM of 256; Linear 256 -> 256; ReLU;
L2 norm) over partial utterances of 160 frames (1.6 s).

Checked once against the reference (torch 2.15 nn.LSTM/nn.Linear with the same weights, librosa 0.11's
melspectrogram with reflect padding, in a throwaway venv): 54 windows of espeak-ng and Asterisk recordings, cosine
between the two embeddings 1.000000 for every window, mel spectrograms within 2e-7 (relative).
"""
import pickle
import struct
from collections import OrderedDict

import numpy as np

SAMPLE_RATE = 16000
N_FFT = 400  # 25 ms
HOP = 160  # 10 ms
N_MELS = 40
PARTIAL_FRAMES = 160  # 1.6 s
PARTIAL_SAMPLES = PARTIAL_FRAMES * HOP
NORM_TARGET_DBFS = -30

_DTYPES = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "HalfStorage": np.float16,
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "ByteStorage": np.uint8,
}


class _Storage:
    def __init__(self, dtype, numel):
        self.dtype = dtype
        self.numel = numel
        self.data = None


class _Tensor:
    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset, self.size, self.stride = storage, offset, tuple(size), tuple(stride)

    def array(self):
        item = np.dtype(self.storage.dtype).itemsize
        return np.lib.stride_tricks.as_strided(
            self.storage.data[self.offset :], shape=self.size, strides=[s * item for s in self.stride]
        ).copy()


def _rebuild_tensor_v2(storage, offset, size, stride, *_):
    return _Tensor(storage, offset, size, stride)


class _Unpickler(pickle.Unpickler):
    def __init__(self, f, storages):
        super().__init__(f)
        self.storages = storages

    def find_class(self, module, name):
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return _rebuild_tensor_v2
        if module == "torch" and name in _DTYPES:
            return name
        if module == "collections" and name == "OrderedDict":
            return OrderedDict
        raise pickle.UnpicklingError(f"unexpected object in the checkpoint: {module}.{name}")

    def persistent_load(self, pid):
        kind, storage_type, key, _location, numel, view = pid
        if kind != "storage" or view is not None:
            raise pickle.UnpicklingError(f"unsupported storage reference {pid!r}")
        if key not in self.storages:
            self.storages[key] = _Storage(_DTYPES[storage_type], numel)
        return self.storages[key]


def load_legacy_checkpoint(path):
    """A torch.save file of the legacy (non-zip) format as nested dicts of numpy arrays, without torch."""
    with open(path, "rb") as f:
        for _ in range(3):  # magic number, protocol version, system info
            pickle.load(f)
        storages = {}
        obj = _Unpickler(f, storages).load()
        keys = pickle.load(f)
        for key in keys:
            s = storages[key]
            (numel,) = struct.unpack("<q", f.read(8))
            if numel != s.numel:
                raise ValueError(f"storage {key}: {numel} elements, the pickle said {s.numel}")
            s.data = np.frombuffer(f.read(numel * np.dtype(s.dtype).itemsize), dtype=s.dtype)

    def convert(o):
        if isinstance(o, _Tensor):
            return o.array()
        if isinstance(o, dict):
            return {k: convert(v) for k, v in o.items()}
        return o

    return convert(obj)


def _sigmoid(x):
    return 0.5 * (1 + np.tanh(0.5 * x))  # no overflow for large |x|


def _hz_to_mel(f):
    f = np.asarray(f, dtype=np.float64)
    mel = f / (200.0 / 3)
    logstep = np.log(6.4) / 27.0
    return np.where(f >= 1000.0, 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / logstep, mel)


def _mel_to_hz(m):
    m = np.asarray(m, dtype=np.float64)
    logstep = np.log(6.4) / 27.0
    return np.where(m >= 15.0, 1000.0 * np.exp(logstep * (m - 15.0)), m * (200.0 / 3))


def mel_filters():
    """librosa.filters.mel(sr=16000, n_fft=400, n_mels=40) (Slaney scale and area normalisation), as Resemblyzer used."""
    fft_freqs = np.linspace(0, SAMPLE_RATE / 2, 1 + N_FFT // 2)
    mel_f = _mel_to_hz(np.linspace(_hz_to_mel(0.0), _hz_to_mel(SAMPLE_RATE / 2), N_MELS + 2))
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fft_freqs[None, :]
    weights = np.zeros((N_MELS, len(fft_freqs)))
    for i in range(N_MELS):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2 : N_MELS + 2] - mel_f[:N_MELS]))[:, None]
    return weights.astype(np.float32)


class SpeakerEncoder:
    def __init__(self, weights_path):
        state = load_legacy_checkpoint(weights_path)["model_state"]
        self.layers = []
        for k in range(3):
            w_ih = state[f"lstm.weight_ih_l{k}"].astype(np.float32)
            w_hh = state[f"lstm.weight_hh_l{k}"].astype(np.float32)
            b = (state[f"lstm.bias_ih_l{k}"] + state[f"lstm.bias_hh_l{k}"]).astype(np.float32)
            self.layers.append((w_ih.T.copy(), w_hh.T.copy(), b))
        self.linear_w = state["linear.weight"].astype(np.float32).T.copy()
        self.linear_b = state["linear.bias"].astype(np.float32)
        self.hidden = self.layers[0][1].shape[0]
        self.mel = mel_filters()
        n = np.arange(N_FFT)
        self.window = (0.5 - 0.5 * np.cos(2 * np.pi * n / N_FFT)).astype(np.float32)  # periodic Hann

    def mel_spectrogram(self, wav):
        """Power mel spectrogram, frames x 40 (librosa's: centred frames, reflect padding)."""
        pad = N_FFT // 2
        y = np.pad(wav.astype(np.float32), pad, mode="reflect") if wav.size > pad else np.pad(wav, pad)
        n_frames = 1 + (y.size - N_FFT) // HOP
        idx = np.arange(N_FFT)[None, :] + HOP * np.arange(n_frames)[:, None]
        spec = np.abs(np.fft.rfft(y[idx] * self.window, axis=1)) ** 2
        return (spec.astype(np.float32) @ self.mel.T).astype(np.float32)

    def forward(self, mels):
        """Embeddings of a batch of partials (batch x 160 x 40): the last layer's final hidden state, Linear, ReLU, L2."""
        x = mels
        hsz = self.hidden
        for w_ih, w_hh, b in self.layers:
            batch, steps, _ = x.shape
            gates_x = x @ w_ih + b
            h = np.zeros((batch, hsz), np.float32)
            c = np.zeros((batch, hsz), np.float32)
            out = np.empty((batch, steps, hsz), np.float32)
            for t in range(steps):
                g = gates_x[:, t] + h @ w_hh
                i = _sigmoid(g[:, :hsz])
                f = _sigmoid(g[:, hsz : 2 * hsz])
                gg = np.tanh(g[:, 2 * hsz : 3 * hsz])
                o = _sigmoid(g[:, 3 * hsz :])
                c = f * c + i * gg
                h = o * np.tanh(c)
                out[:, t] = h
            x = out
        e = np.maximum(0, h @ self.linear_w + self.linear_b)
        return e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-8)


def normalize_volume(wav):
    """Raised (never lowered) to -30 dBFS, as Resemblyzer's preprocessing does."""
    rms = np.sqrt(np.mean(np.square(wav, dtype=np.float64)))
    if rms <= 0:
        return wav
    change = NORM_TARGET_DBFS - 20 * np.log10(rms)
    return wav * (10 ** (change / 20)) if change > 0 else wav


def embed_windows(encoder, audio, spans, step=0.8, batch=64):
    """One embedding per 1.6 s window over each (start, end) span of `audio` (seconds), `step` apart; a span shorter
    than a window gets one window, zero-padded past the span. Returns [(span_index, start, end, embedding)]."""
    wav = normalize_volume(audio.astype(np.float32))
    windows = []
    for si, (start, end) in enumerate(spans):
        a = max(0, int(round(start * SAMPLE_RATE)))
        b = min(wav.size, int(round(end * SAMPLE_RATE)))
        if b - a < int(0.3 * SAMPLE_RATE):
            continue
        hop = int(step * SAMPLE_RATE)
        s = a
        while True:
            e = min(s + PARTIAL_SAMPLES, b)
            windows.append((si, s, e))
            if s + PARTIAL_SAMPLES >= b:
                break
            s += hop
            if b - s < PARTIAL_SAMPLES // 2:  # a short tail: the last full window ends at the span's end instead
                s = max(a, b - PARTIAL_SAMPLES)
                windows.append((si, s, b))
                break
    out = []
    for k in range(0, len(windows), batch):
        group = windows[k : k + batch]
        mels = []
        for _, s, e in group:
            piece = wav[s:e]
            if piece.size < PARTIAL_SAMPLES:
                piece = np.pad(piece, (0, PARTIAL_SAMPLES - piece.size))
            mels.append(encoder.mel_spectrogram(piece)[:PARTIAL_FRAMES])
        emb = encoder.forward(np.stack(mels))
        for (si, s, e), v in zip(group, emb):
            out.append((si, s / SAMPLE_RATE, e / SAMPLE_RATE, v))
    return out
