"""`mg.detect_anomaly()` (being written)."""


class detect_anomaly:
    def __enter__(self):
        raise NotImplementedError("detect_anomaly is being written")

    def __exit__(self, *exc_info):
        return None
