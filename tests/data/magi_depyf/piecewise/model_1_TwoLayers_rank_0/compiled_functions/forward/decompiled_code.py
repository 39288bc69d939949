def forward(self, x):
    for layer in iter(self.layers):
        x = layer(x)
    return x
