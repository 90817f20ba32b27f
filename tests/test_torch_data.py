"""minigrad.utils.data against torch.utils.data: batches, their shapes and dtypes, collation of every kind of
sample, lengths, shuffling with a generator (reproducible, a permutation), random_split's sizes."""

import collections

import numpy as np
import pytest

import minigrad as mg
from minigrad.utils.data import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split

torch = pytest.importorskip("torch")


def as_numpy(batch):
    """A batch of either library as plain nested Python / NumPy, to compare structure, values and dtypes."""
    if isinstance(batch, (mg.Tensor, torch.Tensor)):
        array = batch.numpy() if isinstance(batch, mg.Tensor) else batch.detach().numpy()
        return ("tensor", str(array.dtype), array.shape, array.tolist())
    if isinstance(batch, dict):
        return {k: as_numpy(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [as_numpy(v) for v in batch])
    return batch


Point = collections.namedtuple("Point", "x label")

SAMPLES = {
    "floats": [1.5, 2.0, -3.25],
    "ints": [1, 2, 3],
    "bools": [True, False, True],
    "strings": ["a", "bc", "d"],
    "arrays": [np.arange(3, dtype=np.float32) + i for i in range(3)],
    "int arrays": [np.arange(2) + i for i in range(3)],
    "tuples": [(np.ones(2, dtype=np.float32) * i, i) for i in range(3)],
    "lists": [[i, float(i)] for i in range(3)],
    "dicts": [{"x": np.full(2, i, dtype=np.float64), "y": i, "name": str(i)} for i in range(3)],
    "namedtuples": [Point(np.zeros(2, dtype=np.float32), i) for i in range(3)],
}


def to_lib(sample, lib):
    """NumPy arrays in a sample become the library's tensors (as a dataset of tensors would give)."""
    if isinstance(sample, np.ndarray):
        return mg.tensor(sample, dtype=sample.dtype) if lib is mg else torch.from_numpy(sample)
    if isinstance(sample, dict):
        return {k: to_lib(v, lib) for k, v in sample.items()}
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):
        return type(sample)(*(to_lib(v, lib) for v in sample))
    if isinstance(sample, (list, tuple)):
        return type(sample)(to_lib(v, lib) for v in sample)
    return sample


@pytest.mark.parametrize("kind", list(SAMPLES))
@pytest.mark.parametrize("tensors", [False, True])
def test_default_collate_matches_pytorch(kind, tensors):
    samples = SAMPLES[kind]
    ours = default_collate([to_lib(s, mg) for s in samples] if tensors else samples)
    theirs = torch.utils.data.default_collate([to_lib(s, torch) for s in samples] if tensors else samples)
    assert as_numpy(ours) == as_numpy(theirs)
    if kind == "namedtuples":
        assert isinstance(ours, Point)


def test_loader_batches_match_pytorch_without_shuffle():
    x, y = np.arange(30, dtype=np.float32).reshape(10, 3), np.arange(10)
    for batch_size, drop_last in [(1, False), (3, False), (3, True), (10, False), (4, True)]:
        ours = DataLoader(TensorDataset(mg.tensor(x), mg.tensor(y)), batch_size=batch_size, drop_last=drop_last)
        theirs = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)),
                                             batch_size=batch_size, drop_last=drop_last)
        assert len(ours) == len(theirs)
        assert [as_numpy(b) for b in ours] == [as_numpy(b) for b in theirs]


def test_shuffle_is_a_reproducible_permutation_each_epoch():
    data = TensorDataset(mg.arange(20))
    loader = DataLoader(data, batch_size=6, shuffle=True, generator=mg.Generator().manual_seed(0))
    epochs = [np.concatenate([b[0].numpy() for b in loader]) for _ in range(2)]
    assert all(sorted(e.tolist()) == list(range(20)) for e in epochs)
    assert not np.array_equal(epochs[0], epochs[1])  # a new order every epoch
    again = DataLoader(data, batch_size=6, shuffle=True, generator=mg.Generator().manual_seed(0))
    np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in again]), epochs[0])
    mg.manual_seed(1)
    first = [b[0].numpy().tolist() for b in DataLoader(data, batch_size=20, shuffle=True)]
    mg.manual_seed(1)
    assert first == [b[0].numpy().tolist() for b in DataLoader(data, batch_size=20, shuffle=True)]


def test_a_custom_dataset_and_collate_fn():
    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": float(i), "y": i * i}

    batches = list(DataLoader(Squares(), batch_size=2, collate_fn=lambda b: [s["y"] for s in b]))
    assert batches == [[0, 1], [4, 9], [16]]
    batch = next(iter(DataLoader(Squares(), batch_size=5)))
    assert batch["x"].dtype == mg.float64 and batch["y"].dtype == mg.int64
    assert [s for s in DataLoader(Squares(), batch_size=None)][2] == {"x": 2.0, "y": 4}
    with pytest.raises(NotImplementedError):
        len(Dataset())


def test_loader_arguments():
    data = TensorDataset(mg.arange(4))
    assert len(list(DataLoader(data, batch_size=2, num_workers=2, pin_memory=True, persistent_workers=False))) == 2
    with pytest.raises(ValueError):
        DataLoader(data, batch_size=0)
    with pytest.raises(TypeError, match="batchsize"):
        DataLoader(data, batchsize=2)
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(data, sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(mg.zeros(3), mg.zeros(4))


@pytest.mark.parametrize("lengths", [[3, 7], [0.5, 0.5], [0.3, 0.3, 0.4], [0.33, 0.33, 0.34], [0.1, 0.9], [10]])
def test_random_split_sizes_match_pytorch(lengths):
    ours = random_split(TensorDataset(mg.arange(10)), lengths, generator=mg.Generator().manual_seed(0))
    theirs = torch.utils.data.random_split(torch.arange(10), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    indices = sorted(i for subset in ours for i in subset.indices)
    assert indices == list(range(10)) and all(isinstance(s, Subset) for s in ours)
    again = random_split(TensorDataset(mg.arange(10)), lengths, generator=mg.Generator().manual_seed(0))
    assert [s.indices for s in again] == [s.indices for s in ours]
    assert ours[0][0][0].item() == ours[0].indices[0]


def test_random_split_errors():
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(TensorDataset(mg.arange(10)), [3, 3])
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(TensorDataset(mg.arange(10)), [0.5, 0.6])


def test_samplers_give_pytorchs_indices():
    from minigrad.utils.data import BatchSampler, RandomSampler, SequentialSampler

    data = list(range(7))
    assert list(SequentialSampler(data)) == list(torch.utils.data.SequentialSampler(data))
    for drop_last in (False, True):
        ours = BatchSampler(SequentialSampler(data), 3, drop_last)
        theirs = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(data), 3, drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    assert sorted(RandomSampler(data)) == data and len(RandomSampler(data, num_samples=3)) == 3
    endless = iter(RandomSampler(data, replacement=True, num_samples=int(1e10)))  # makemore's: drawn lazily
    assert all(0 <= next(endless) < 7 for _ in range(10_000))
    again = [list(RandomSampler(data, generator=mg.Generator().manual_seed(3))) for _ in range(2)]
    assert again[0] == again[1]


def test_a_loader_takes_a_sampler_or_a_batch_sampler_as_pytorchs():
    from minigrad.utils.data import BatchSampler

    for lib, loader in ((mg, DataLoader), (torch, torch.utils.data.DataLoader)):
        data = lib.utils.data.TensorDataset(lib.arange(6))
        by_sampler = [b[0].tolist() for b in loader(data, batch_size=2, sampler=[5, 0, 3, 1])]
        by_batches = [b[0].tolist() for b in loader(data, batch_sampler=[[4, 2], [1]])]
        assert by_sampler == [[5, 0], [3, 1]] and by_batches == [[4, 2], [1]]
        assert len(loader(data, batch_size=4, sampler=[0, 1, 2, 3, 4])) == 2
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(TensorDataset(mg.arange(4)), batch_size=2, batch_sampler=BatchSampler([0, 1], 1, False))
