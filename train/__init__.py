"""Training tools of the evaluation, above the engine, the search and the USI client they drive: the KP fit and
self-play data (:mod:`train.fit`, ``python -m train``), teacher-scored data (:mod:`train.teacher`), what both share
about training games (:mod:`train.games`), and the network probe (:mod:`train.nn_probe`). The evaluation itself,
with the weight loading it needs at run time, is :mod:`eval`."""
