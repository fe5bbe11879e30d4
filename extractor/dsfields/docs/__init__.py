"""The docs site: the field dictionary of every snapshotted DeepSpeed release, rendered for mkdocs.

``views`` is what the templates see of a release and of the site, ``planning`` which pages and data files
the site has, ``writing`` renders them into docs/ (templates in ``dsfields/templates/docs``, filters in
``filters``, the seed's groups in ``groups``), ``command`` is ``dsfields docs build|serve``, and
``hooks`` hands the generated navigation to mkdocs. May import: ``dsfields.model``, the other
consumers (``diff``, ``links``), jinja2 and mkdocs; never DeepSpeed or ``dsfields.extract``.
"""
