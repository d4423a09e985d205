"""The ``datagen`` command line: parse, load the recipe, call the library, format errors once."""
