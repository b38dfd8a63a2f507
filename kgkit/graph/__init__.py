"""The corpus graph: many documents' run folders in one store, resolved across documents."""
