"""The docs site: the field dictionary of every snapshotted DeepSpeed release, rendered for mkdocs.

``render`` turns snapshots into Markdown pages (templates in ``dsfields/templates/docs``, filters in
``filters``, the seed's groups in ``groups``), ``command`` is ``dsfields docs build|serve``, and
``hooks`` hands the generated navigation to mkdocs. Nothing here imports DeepSpeed.
"""
